#pragma once

// The one way every C++ client opens its channel to a server (ReducerClient, and with it the CLI
// and parallel streams; gpureduce-load's connections): TLS as the security flags ask, no
// client-side message cap, the balancing asked for; and the one place a call gets its token.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "client/channel_security.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"

namespace gpureduce::client {

// How a channel spreads its calls over the servers its target names (ipv4:A:P,B:P, or a DNS name
// with several addresses such as a headless Kubernetes Service). With one server both are alike.
enum class Balancing {
  kRoundRobin,  // over every server that is up; one that goes away leaves the rotation
  kInOrder,     // the first server that answers takes every call, the next once it fails
};

struct ChannelOptions {
  Balancing balancing = Balancing::kRoundRobin;
  // The channel shares no TCP connection with other channels to the same target (gRPC shares
  // them by default), as parallel streams and the load generator's connections need.
  bool own_connection = false;
  // >= 0: also a channel argument of this value, so numbered channels never compare equal.
  int connection_number = -1;
};

// INVALID_ARGUMENT or NOT_FOUND naming the file or flag when the security files are unusable.
absl::StatusOr<std::shared_ptr<grpc::Channel>> OpenChannel(const std::string& target,
                                                           const ChannelSecurity& security,
                                                           const ChannelOptions& options = {});

// Adds the bearer token (ReadToken's; "" for none) to a call's metadata.
void AddToken(const std::string& token, grpc::ClientContext* context);

}  // namespace gpureduce::client
