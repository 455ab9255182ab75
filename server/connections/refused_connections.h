#pragma once

// Connections the gate refuses at accept: each gets a GOAWAY saying why, its write side is shut,
// and it is held for a moment (reading and dropping what the client still sends) before it is
// closed. Closing at once, with the client's first bytes unread, would reset the connection,
// and a client reset that way may never read the GOAWAY. Owned by the gate's thread: not
// thread-safe. At most kMaxHeld are held; beyond them a refused connection is closed at once.

#include <cstddef>
#include <deque>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace gpureduce::server {

class RefusedConnections {
 public:
  static constexpr size_t kMaxHeld = 1024;
  static constexpr absl::Duration kHold = absl::Seconds(1);

  RefusedConnections();
  ~RefusedConnections();  // closes what it still holds
  RefusedConnections(const RefusedConnections&) = delete;
  RefusedConnections& operator=(const RefusedConnections&) = delete;

  // Takes `fd`: writes the GOAWAY (when `plaintext`: TLS would need a handshake first), shuts
  // the write side and holds it.
  void Refuse(int fd, absl::string_view why, bool plaintext);

  // An epoll descriptor that is readable when a held connection has something to read; the
  // gate's thread watches it and calls Poll.
  int poll_fd() const { return epoll_fd_; }
  // Reads what the held connections sent, closes those that ended or whose hold is over.
  void Poll();
  // Milliseconds until the next hold is over (epoll_wait's timeout); -1 when none is held.
  int NextTimeoutMs() const;

 private:
  void Close(int fd);

  int epoll_fd_ = -1;
  absl::flat_hash_set<int> held_;
  std::deque<std::pair<absl::Time, int>> deadlines_;  // in order; entries of closed fds linger
};

}  // namespace gpureduce::server
