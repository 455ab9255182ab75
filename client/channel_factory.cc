#include "client/channel_factory.h"

#include "grpcpp/create_channel.h"
#include "grpcpp/support/channel_arguments.h"

namespace gpureduce::client {

absl::StatusOr<std::shared_ptr<grpc::Channel>> OpenChannel(const std::string& target,
                                                           const ChannelSecurity& security,
                                                           const ChannelOptions& options) {
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      MakeChannelCredentials(security);
  if (!credentials.ok()) return credentials.status();
  grpc::ChannelArguments args;
  AddChannelArguments(security, &args);
  args.SetLoadBalancingPolicyName(options.balancing == Balancing::kRoundRobin ? "round_robin"
                                                                              : "pick_first");
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  if (options.connection_number >= 0) {
    args.SetInt("gpureduce.connection", options.connection_number);
  }
  if (options.own_connection) args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel(target, *credentials, args);
}

void AddToken(const std::string& token, grpc::ClientContext* context) {
  if (!token.empty()) context->AddMetadata("authorization", "Bearer " + token);
}

}  // namespace gpureduce::client
