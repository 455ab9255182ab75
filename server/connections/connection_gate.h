#pragma once

// Every TCP connection passes here before gRPC sees it: the server accepts on its own listening
// sockets (listener.h) and hands gRPC only the connections within the bounds, through gRPC's
// external connection acceptor. gRPC 1.51 has no bound on connections of its own, and no way to
// close one connection, so the gate keeps a descriptor of each (connection.h) to notice the
// close and to evict a client that abuses its connection.
//
// Bounds: the connections open at once, in all and from one address (a client with many
// connections could otherwise hold one buffer per call on each), and an address whose
// connection was evicted gets no new one for a cooldown, so a client cannot repeat an attack
// by reconnecting.

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/server_builder.h"
#include "server/connections/connection.h"
#include "server/connections/listener.h"
#include "server/connections/peer_address.h"
#include "server/connections/refused_connections.h"
#include "server/failure_log.h"
#include "server/metrics/connection_metrics.h"

namespace gpureduce::server {

struct ConnectionLimits {
  uint32_t max_connections = 256;            // open at once; 0: no bound
  uint32_t max_connections_per_client = 32;  // from one address; 0: no bound
  // An evicted connection's address gets no new connection for this long.
  absl::Duration eviction_cooldown = absl::Seconds(10);
  // A connection whose client cancels calls faster than this, for longer than the burst, is
  // evicted (call_account.h); 0: no bound.
  double cancelled_calls_per_second = 200;
  // A connection with more HTTP/2 streams in the server than this is evicted (memory_guard.h);
  // 0: LiveStreamsFor(the streams a connection may have open).
  int64_t max_live_streams = 0;
  // Bytes a connection may hold in messages still arriving beyond what its calls may
  // (memory_guard.h): headers, and the small messages of the other methods.
  uint64_t slack_bytes = uint64_t{256} << 10;
  // Whether the memory guard accounts the connections' bytes at all. Off with gRPC's BDP probe:
  // the windows it opens (up to 1 GiB a stream) let an honest stream send far ahead of its reads,
  // which the account cannot tell from a message longer than its limit.
  bool account_bytes = true;

  // A stream lives on in the server a while after its client saw it end (until its call is
  // destroyed), so a busy client's connection may have more streams in the server than it may
  // have open: measured 26 for 8 open at 9,700 calls a second refused in part. Rapid reset
  // reaches hundreds within milliseconds and thousands if let.
  static int64_t LiveStreamsFor(uint32_t open_streams) { return 4 * int64_t{open_streams} + 64; }

  double CancelledCallsBurst() const {
    return cancelled_calls_per_second * 5 > 1000 ? cancelled_calls_per_second * 5 : 1000;
  }
};

class ConnectionGate {
 public:
  // `failures`: where refusals and evictions are logged (at a bounded rate).
  ConnectionGate(const ConnectionLimits& limits, ConnectionMetrics& metrics, FailureLog& failures);
  // Stops the gate's thread; connections still open stay with gRPC.
  ~ConnectionGate();
  ConnectionGate(const ConnectionGate&) = delete;
  ConnectionGate& operator=(const ConnectionGate&) = delete;

  // Accepts on `listener`'s sockets from now on and hands each connection within the bounds to
  // `acceptor` (gRPC's, of a started server). `plaintext`: no TLS on these connections.
  absl::Status Start(Listener listener,
                     std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor,
                     bool plaintext);
  // Closes the listening sockets: new connections are refused by the kernel. Call before the
  // gRPC server shuts down (it must not be handed connections after that).
  void StopAccepting();

  // The connection of a call, by gRPC's peer string; null when the gate does not know it.
  std::shared_ptr<Connection> Find(absl::string_view grpc_peer) const;
  std::shared_ptr<Connection> Find(const PeerAddress& peer) const;
  // Every open connection.
  std::vector<std::shared_ptr<Connection>> Snapshot() const;
  // Evicts `connection` (Connection::Evict) and starts its address's cooldown; counted once.
  void Evict(Connection& connection, Eviction reason, absl::string_view why);

  size_t open() const;
  const ConnectionLimits& limits() const { return limits_; }

 private:
  void Run();
  void AcceptFrom(int listener_fd);
  // Why a connection from `peer` is refused now, or empty (then it is counted in).
  const char* Admit(const PeerAddress& peer, ConnectionRefusal* reason)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Refuse(int fd, const PeerAddress& peer, ConnectionRefusal reason, const char* why);
  void Forget(int fd);
  // Forgets the connection of the gate's descriptor `fd` (counted out, no longer watched);
  // returns it, if the gate still held it, for the caller to let go of.
  std::shared_ptr<Connection> ForgetLocked(int fd) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ConnectionLimits limits_;
  ConnectionMetrics& metrics_;
  FailureLog& failures_;
  bool plaintext_ = true;
  Listener listener_;
  RefusedConnections refused_;  // the gate's thread's
  // Connections forgotten at an accept (ended, the gate not yet told), kept to the end of the
  // gate's batch of events (the gate's thread's).
  std::vector<std::shared_ptr<Connection>> ended_in_batch_;
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> accepting_{false};
  std::thread thread_;

  // Held while a connection is handed to gRPC, and while listener_ is closed or read outside the
  // gate's thread.
  absl::Mutex handoff_mu_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<PeerAddress, std::shared_ptr<Connection>> by_peer_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<int, PeerAddress> by_fd_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<PeerAddress, uint32_t> per_address_ ABSL_GUARDED_BY(mu_);  // no zeros
  absl::flat_hash_map<PeerAddress, absl::Time> cooling_ ABSL_GUARDED_BY(mu_);    // until when
};

}  // namespace gpureduce::server
