#pragma once

// The server's transport security: plaintext, TLS (--tls-cert, --tls-key), or mutual TLS that
// requires and verifies a client certificate signed by --tls-client-ca.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/security/server_credentials.h"

namespace gpureduce::server {

struct TlsFiles {
  std::string cert;       // PEM certificate chain; empty: plaintext
  std::string key;        // PEM private key of `cert`
  std::string client_ca;  // PEM CA bundle; set: clients must present a certificate it signed
};

// The credentials to listen with, or INVALID_ARGUMENT / NOT_FOUND naming the file or flag.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsFiles& files);

// "plaintext", "TLS" or "mutual TLS", for the log.
const char* DescribeTransport(const TlsFiles& files);

}  // namespace gpureduce::server
