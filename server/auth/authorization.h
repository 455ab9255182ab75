#pragma once

// The gRPC side of bearer tokens: a call's "authorization" metadata, checked against the
// server's tokens (token_authenticator.h).

#include "absl/status/status.h"
#include "grpcpp/server_context.h"
#include "server/auth/token_authenticator.h"

namespace gpureduce::server {

// OK when the server takes no tokens (`tokens` null) or the call carries an accepted one;
// otherwise UNAUTHENTICATED or PERMISSION_DENIED, as TokenAuthenticator::Check says.
absl::Status Authorize(const TokenAuthenticator* tokens,
                       const grpc::CallbackServerContext& context);

}  // namespace gpureduce::server
