#include "server/auth/token_authenticator.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/read_file.h"
#include "openssl/crypto.h"
#include "openssl/evp.h"

namespace gpureduce::server {

absl::StatusOr<std::unique_ptr<TokenAuthenticator>> TokenAuthenticator::FromFile(
    const std::string& path) {
  absl::StatusOr<std::string> text = ReadTextFile(path, "--auth-token-file");
  if (!text.ok()) return text.status();
  return FromText(*text, path);
}

absl::StatusOr<std::unique_ptr<TokenAuthenticator>> TokenAuthenticator::FromText(
    absl::string_view text, absl::string_view origin) {
  std::vector<Digest> digests;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    std::optional<Digest> digest = Sha256(line);
    if (!digest.has_value()) {
      return absl::InternalError("cannot compute SHA-256 digests (OpenSSL): tokens unusable");
    }
    digests.push_back(*digest);
  }
  if (digests.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, " holds no token (one per line; '#' starts a comment)"));
  }
  return std::unique_ptr<TokenAuthenticator>(new TokenAuthenticator(std::move(digests)));
}

std::optional<TokenAuthenticator::Digest> TokenAuthenticator::Sha256(absl::string_view text) {
  Digest digest{};
  unsigned int length = 0;
  if (EVP_Digest(text.data(), text.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1 ||
      length != digest.size()) {
    return std::nullopt;
  }
  return digest;
}

absl::Status TokenAuthenticator::Check(std::optional<absl::string_view> authorization) const {
  constexpr absl::string_view kScheme = "Bearer ";
  if (!authorization.has_value() || !absl::StartsWithIgnoreCase(*authorization, kScheme)) {
    return absl::UnauthenticatedError(
        "this server requires a bearer token: send the metadata 'authorization: Bearer <token>' "
        "(the gpureduce tools: --token-file)");
  }
  const absl::string_view token = absl::StripAsciiWhitespace(authorization->substr(kScheme.size()));
  if (token.empty()) {
    return absl::UnauthenticatedError(
        "the authorization metadata names the Bearer scheme but carries no token");
  }
  // Compared as digests, every one in full: the time taken says nothing about the token.
  const std::optional<Digest> presented = Sha256(token);
  int matches = 0;
  for (const Digest& digest : digests_) {
    matches |= presented.has_value() &&
               CRYPTO_memcmp(presented->data(), digest.data(), digest.size()) == 0;
  }
  if (matches == 0) {
    return absl::PermissionDeniedError("the bearer token is not one this server accepts");
  }
  return absl::OkStatus();
}

}  // namespace gpureduce::server
