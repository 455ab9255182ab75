#pragma once

// One call's place in its connection's accounts (connection.h), for as long as the call lasts:
// - the call counts among the connection's calls in the application (Connection::live_calls),
//   and among those that have received no message yet until one arrives;
// - the connection is credited with the bytes of the call's client that the server has
//   accounted for: its headers, and what a call that never received a message may have sent
//   before it ended; the memory guard weighs them against what TCP received;
// - a call its client cancelled (or whose deadline passed) takes a token from the connection's
//   budget, and a connection whose client cancels calls faster than the stated rate is evicted
//   (rapid reset at a pace the server keeps up with: no memory lost, but the server's CPU is).
// The Reducer's calls hold one in their ReduceCall; every other call, in its CallTracker.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>

#include "grpcpp/support/string_ref.h"
#include "server/connections/connection_gate.h"

namespace gpureduce::server {

// What a call that has received no message may hold of what its client sent before the call
// asked for it: a stream's initial flow-control window (gRPC's default, 64 KiB).
extern const uint64_t kUnreadCallBytes;

// What a call's headers took on the wire, generously.
uint64_t MetadataBytes(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata);

class CallAccount {
 public:
  // `metadata_bytes`: the call's headers (MetadataBytes).
  CallAccount(ConnectionGate& gate, std::shared_ptr<Connection> connection,
              uint64_t metadata_bytes);
  ~CallAccount();
  CallAccount(const CallAccount&) = delete;
  CallAccount& operator=(const CallAccount&) = delete;

  // A message of the call arrived (only the first one changes anything).
  void MessageReceived();
  // The call ended cancelled by its client or its deadline (only the first report counts).
  void Cancelled();

  Connection& connection() const { return *connection_; }

 private:
  void Credit(uint64_t bytes);

  ConnectionGate& gate_;
  const std::shared_ptr<Connection> connection_;
  std::atomic<bool> received_{false};
  std::atomic<bool> cancelled_{false};
};

}  // namespace gpureduce::server
