#include "client/channel_security.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/read_file.h"

namespace gpureduce::client {

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const ChannelSecurity& security) {
  if (security.tls_cert.empty() != security.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (!security.tls()) {
    if (!security.tls_server_name.empty()) {
      return absl::InvalidArgumentError(
          "--tls-server-name needs TLS: give --tls-ca (or --tls-cert and --tls-key)");
    }
    return grpc::InsecureChannelCredentials();
  }
  grpc::SslCredentialsOptions options;
  if (!security.tls_ca.empty()) {
    absl::StatusOr<std::string> ca = ReadTextFile(security.tls_ca, "--tls-ca");
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *ca;
  }
  if (!security.tls_cert.empty()) {
    absl::StatusOr<std::string> cert = ReadTextFile(security.tls_cert, "--tls-cert");
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadTextFile(security.tls_key, "--tls-key");
    if (!key.ok()) return key.status();
    options.pem_cert_chain = *cert;
    options.pem_private_key = *key;
  }
  return grpc::SslCredentials(options);
}

void AddSecurityFlags(FlagSet& flags, ChannelSecurity* security) {
  flags.AddString("tls-ca", &security->tls_ca,
                  "use TLS, trusting the server certificate this PEM CA bundle signed", "PATH");
  flags.AddString("tls-cert", &security->tls_cert,
                  "mutual TLS: present this PEM client certificate chain (implies TLS; with "
                  "--tls-key; without --tls-ca the system's CAs are trusted)",
                  "PATH");
  flags.AddString("tls-key", &security->tls_key, "the PEM private key of --tls-cert", "PATH");
  flags.AddString("tls-server-name", &security->tls_server_name,
                  "check the server's certificate for this name instead of the target's host",
                  "NAME");
  flags.AddString("token-file", &security->token_file,
                  "send the bearer token in this file (its first line that is neither empty nor a "
                  "'#' comment) with every call; without TLS it travels in clear",
                  "PATH");
}

void AddChannelArguments(const ChannelSecurity& security, grpc::ChannelArguments* args) {
  if (security.tls() && !security.tls_server_name.empty()) {
    args->SetSslTargetNameOverride(security.tls_server_name);
  }
}

absl::StatusOr<std::string> ReadToken(const ChannelSecurity& security) {
  if (security.token_file.empty()) return std::string();
  absl::StatusOr<std::string> text = ReadTextFile(security.token_file, "--token-file");
  if (!text.ok()) return text.status();
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty() && line.front() != '#') return std::string(line);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("the --token-file file ", security.token_file, " holds no token"));
}

}  // namespace gpureduce::client
