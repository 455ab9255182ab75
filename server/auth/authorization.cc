#include "server/auth/authorization.h"

#include <optional>

namespace gpureduce::server {

absl::Status Authorize(const TokenAuthenticator* tokens,
                       const grpc::CallbackServerContext& context) {
  if (tokens == nullptr) return absl::OkStatus();
  std::optional<absl::string_view> authorization;
  const auto& metadata = context.client_metadata();
  if (auto it = metadata.find("authorization"); it != metadata.end()) {
    authorization = absl::string_view(it->second.data(), it->second.size());
  }
  return tokens->Check(authorization);
}

}  // namespace gpureduce::server
