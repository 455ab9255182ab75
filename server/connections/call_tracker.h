#pragma once

// Accounts every call to its connection, whatever the method (gRPC's health and reflection
// services included): a server interceptor is made for each call gRPC hands to the
// application and destroyed when the call ends. It
// - counts the connection's calls in the application (Connection::live_calls);
// - credits the connection with the bytes the call's client sent that the server has accounted
//   for (its headers and small messages, and what a call that never received a message may
//   have sent before it ended), which the memory guard weighs against what TCP received; the
//   Reducer's raw methods credit their large messages themselves (ReduceCall::Received), since
//   only they know what type a message has;
// - evicts a connection whose client cancels calls faster than the stated rate (rapid reset at
//   a pace the server keeps up with: no memory lost, but the server's CPU is).

#include <cstdint>

#include "grpcpp/support/server_interceptor.h"
#include "server/connections/connection_gate.h"

namespace gpureduce::server {

// What a call that has received no message may hold of what its client sent before the call
// asked for it: a stream's initial flow-control window (gRPC's default, 64 KiB).
extern const uint64_t kUnreadCallBytes;

class CallTrackerFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit CallTrackerFactory(ConnectionGate& gate) : gate_(gate) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  friend class CallTracker;

  ConnectionGate& gate_;
};

}  // namespace gpureduce::server
