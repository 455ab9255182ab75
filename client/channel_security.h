#pragma once

// How a client reaches a server that asks for TLS, a client certificate or a bearer token:
// the files the tools' --tls-ca, --tls-cert, --tls-key and --token-file name, turned into gRPC
// channel credentials and the token each call carries.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/flags.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace gpureduce::client {

struct ChannelSecurity {
  std::string tls_ca;      // PEM CA bundle that signed the server's certificate: TLS
  std::string tls_cert;    // PEM client certificate chain (mutual TLS; implies TLS)
  std::string tls_key;     // its PEM private key
  std::string token_file;  // a file holding the bearer token sent with every call
  // The name the server's certificate must carry, when it is not the target's host (a server
  // reached as 127.0.0.1 inside its container, with a certificate for its public name).
  std::string tls_server_name;

  bool tls() const { return !tls_ca.empty() || !tls_cert.empty(); }
};

// Plaintext, or TLS from the files (the system's roots when no CA is named); INVALID_ARGUMENT or
// NOT_FOUND naming the file or flag.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const ChannelSecurity& security);

// Channel arguments `security` needs (the server name to check the certificate against).
void AddChannelArguments(const ChannelSecurity& security, grpc::ChannelArguments* args);

// The tools' --tls-ca, --tls-cert, --tls-key, --tls-server-name and --token-file.
void AddSecurityFlags(FlagSet& flags, ChannelSecurity* security);

// The token in `security.token_file` (its first non-empty line, trimmed); "" without a file.
absl::StatusOr<std::string> ReadToken(const ChannelSecurity& security);

}  // namespace gpureduce::client
