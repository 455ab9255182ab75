#include "server/connections/refused_connections.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "absl/time/clock.h"
#include "server/connections/connection.h"

namespace gpureduce::server {

RefusedConnections::RefusedConnections() : epoll_fd_(epoll_create1(EPOLL_CLOEXEC)) {}

RefusedConnections::~RefusedConnections() {
  for (int fd : held_) close(fd);
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

void RefusedConnections::Refuse(int fd, absl::string_view why, bool plaintext) {
  if (plaintext) {
    // Before the server's SETTINGS, so clients count the connection as failed and back off
    // (gRPC's reports "Failed parsing HTTP/2"); an HTTP/2 client that reads the GOAWAY sees why.
    const std::string frame = GoawayFrame(why);
    (void)!send(fd, frame.data(), frame.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  }
  shutdown(fd, SHUT_WR);
  epoll_event event{};
  event.events = EPOLLIN | EPOLLRDHUP;
  event.data.fd = fd;
  if (held_.size() >= kMaxHeld || epoll_fd_ < 0 ||
      epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
    close(fd);
    return;
  }
  held_.insert(fd);
  deadlines_.emplace_back(absl::Now() + kHold, fd);
}

void RefusedConnections::Poll() {
  epoll_event events[64];
  int ready = 0;
  while ((ready = epoll_wait(epoll_fd_, events, 64, 0)) > 0) {
    for (int i = 0; i < ready; ++i) {
      const int fd = events[i].data.fd;
      char buffer[4096];
      ssize_t got = 0;
      while ((got = recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT)) > 0) {
      }
      if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) Close(fd);
    }
    if (ready < 64) break;
  }
  const absl::Time now = absl::Now();
  while (!deadlines_.empty() && deadlines_.front().first <= now) {
    Close(deadlines_.front().second);  // a number closed and reused since is held anew: no harm
    deadlines_.pop_front();
  }
}

int RefusedConnections::NextTimeoutMs() const {
  if (deadlines_.empty()) return -1;
  const absl::Duration left = deadlines_.front().first - absl::Now();
  return static_cast<int>(std::max<int64_t>(0, absl::ToInt64Milliseconds(left) + 1));
}

void RefusedConnections::Close(int fd) {
  if (held_.erase(fd) == 0) return;  // closed already (its number may belong to another now)
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  close(fd);
}

}  // namespace gpureduce::server
