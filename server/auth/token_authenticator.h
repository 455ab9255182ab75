#pragma once

// Bearer tokens for the Reducer service (--auth-token-file): a call must carry
// "authorization: Bearer <token>" with one of the file's tokens. Tokens are kept only as SHA-256
// digests and compared in constant time, so neither the comparison's timing nor a memory dump
// gives them away. Health and reflection are separate services and stay open for probes.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpureduce::server {

class TokenAuthenticator {
 public:
  // One token per line; blank lines and lines starting with '#' are skipped, surrounding
  // whitespace is not part of a token. A file without a token is an error.
  static absl::StatusOr<std::unique_ptr<TokenAuthenticator>> FromFile(const std::string& path);
  static absl::StatusOr<std::unique_ptr<TokenAuthenticator>> FromText(absl::string_view text,
                                                                      absl::string_view origin);

  // `authorization`: the call's "authorization" metadata, if any. UNAUTHENTICATED without a
  // bearer token, PERMISSION_DENIED for one that is not accepted.
  absl::Status Check(std::optional<absl::string_view> authorization) const;

  size_t size() const { return digests_.size(); }

 private:
  using Digest = std::array<uint8_t, 32>;
  explicit TokenAuthenticator(std::vector<Digest> digests) : digests_(std::move(digests)) {}
  // nullopt when the digest cannot be made (an OpenSSL misconfiguration): the caller fails closed.
  static std::optional<Digest> Sha256(absl::string_view text);

  std::vector<Digest> digests_;
};

}  // namespace gpureduce::server
