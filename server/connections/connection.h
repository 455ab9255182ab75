#pragma once

// One TCP connection the server accepted and handed to gRPC. The server keeps its own descriptor
// of the socket (a dup of gRPC's) to notice the close, to read what TCP received on it
// (memory_guard.h), and to end the connection when its client abuses it: gRPC 1.51 cannot be
// told to close one connection.

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/connections/peer_address.h"

namespace gpureduce::server {

class Connection {
 public:
  // `fd`: the server's own descriptor of the socket, closed on destruction. `plaintext`: the
  // connection carries HTTP/2 in the clear (no TLS), so the server may write a frame of its own.
  Connection(PeerAddress peer, int fd, bool plaintext);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  const PeerAddress& peer() const { return peer_; }
  int fd() const { return fd_; }

  // Ends the connection: a GOAWAY (ENHANCE_YOUR_CALM, `why` as its debug data; plaintext only),
  // then both directions shut, and what the client sent that gRPC has not read yet dropped, so
  // gRPC sees the end at its next read and cancels the connection's calls. The first call
  // returns true; later ones do nothing.
  bool Evict(absl::string_view why);
  bool evicted() const { return evicted_.load(std::memory_order_acquire); }
  // Whether the socket has seen its end (the client's FIN or reset, or an eviction), though the
  // gate may not have handled it yet.
  bool Ended() const;

  // What the calls of this connection account for (call_account.h, reduce_call.h):
  // Calls gRPC has handed to the application that have not ended.
  std::atomic<int64_t> live_calls{0};
  // Those of them that have received no message yet: each may hold what its client sent before
  // the call asked for it (at most a stream's initial window).
  std::atomic<int64_t> unread_calls{0};
  // Bytes of what the client sent that the server has accounted for: messages delivered to the
  // application, headers, and what a call that never read its message may have sent.
  std::atomic<uint64_t> credited_bytes{0};
  // Bytes the connection's admitted calls may hold in messages still arriving (their limits).
  std::atomic<int64_t> allowed_bytes{0};

  // Takes one token from the connection's budget of calls its client cancels (a bucket of
  // `burst` tokens refilled at `per_second`); false when none is left.
  bool TakeCancelToken(double per_second, double burst);

  // Credits the connection with what a call that ended while its message was still arriving
  // may have received (gRPC drops it unseen): `bytes`, as far as a budget of twice `per_second`
  // refilled at `per_second` allows, so that ending calls cannot cover for bytes held by others.
  void CreditDropped(uint64_t bytes, uint64_t per_second);

  // The memory guard's running account (its thread only): TCP bytes received and credits at
  // its last look, and the bytes received since that nothing accounts for yet.
  uint64_t seen_received = 0;
  uint64_t seen_credited = 0;
  int64_t unaccounted = 0;

 private:
  const PeerAddress peer_;
  const int fd_;
  const bool plaintext_;
  std::atomic<bool> evicted_{false};
  absl::Mutex cancel_mu_;
  double cancel_tokens_ ABSL_GUARDED_BY(cancel_mu_) = -1;  // -1: full, not yet used
  absl::Time cancel_refilled_ ABSL_GUARDED_BY(cancel_mu_);
  double drop_tokens_ ABSL_GUARDED_BY(cancel_mu_) = -1;  // bytes; -1: full, not yet used
  absl::Time drop_refilled_ ABSL_GUARDED_BY(cancel_mu_);
};

// The frame a server sends to end a connection at once: a GOAWAY with ENHANCE_YOUR_CALM, last
// stream id 2^31-1 (any stream may have been acted on) and `why` (up to 1 KiB) as its debug data.
std::string GoawayFrame(absl::string_view why);

}  // namespace gpureduce::server
