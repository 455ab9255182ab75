#pragma once

// Accounts every call to its connection (call_account.h) that does not account for itself: a
// server interceptor is made for each such call when gRPC hands it to the application and
// destroyed when the call ends (gRPC's health and reflection services, the Reducer's small
// methods). The Reducer's Reduce and ReduceStream hold their account in their ReduceCall: an
// interceptor makes gRPC take a second trip through its completion queue for every operation
// of a call, which cost 15% of the server's CPU per 1024-float Reduce.

#include "grpcpp/support/server_interceptor.h"
#include "server/connections/connection_gate.h"

namespace gpureduce::server {

class CallTrackerFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit CallTrackerFactory(ConnectionGate& gate) : gate_(gate) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  ConnectionGate& gate_;
};

}  // namespace gpureduce::server
