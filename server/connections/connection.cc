#include "server/connections/connection.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "absl/time/clock.h"

namespace gpureduce::server {
namespace {

constexpr uint8_t kGoaway = 0x7;
constexpr uint32_t kEnhanceYourCalm = 0xb;
// What the client sent and gRPC had not read yet is dropped, up to this much per eviction.
constexpr size_t kMaxDrainBytes = size_t{16} << 20;

void AppendUint32(std::string& out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(value >> shift));
}

void AppendFrameHeader(std::string& out, uint32_t length, uint8_t type) {
  out.push_back(static_cast<char>(length >> 16));
  out.push_back(static_cast<char>(length >> 8));
  out.push_back(static_cast<char>(length));
  out.push_back(static_cast<char>(type));
  out.push_back(0);      // flags
  AppendUint32(out, 0);  // stream 0: the connection
}

}  // namespace

std::string GoawayFrame(absl::string_view why) {
  const absl::string_view debug = why.substr(0, 1024);
  std::string frames;
  AppendFrameHeader(frames, 8 + debug.size(), kGoaway);
  AppendUint32(frames, 0x7fffffff);
  AppendUint32(frames, kEnhanceYourCalm);
  frames.append(debug.data(), debug.size());
  return frames;
}

Connection::Connection(PeerAddress peer, int fd, bool plaintext)
    : peer_(peer), fd_(fd), plaintext_(plaintext) {}

Connection::~Connection() { close(fd_); }

bool Connection::Evict(absl::string_view why) {
  if (evicted_.exchange(true, std::memory_order_acq_rel)) return false;
  if (plaintext_) {
    // gRPC may be writing to the socket too; its frames are small on a connection that only
    // opens and cancels calls, and the client is being sent away either way.
    const std::string frames = GoawayFrame(why);
    // A full send buffer (a client that stopped reading) gets a few milliseconds to make room:
    // evictions are rare (once per connection, then the address cools down).
    size_t sent = 0;
    for (int tries = 0; sent < frames.size() && tries < 4; ++tries) {
      const ssize_t wrote =
          send(fd_, frames.data() + sent, frames.size() - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (wrote > 0) {
        sent += static_cast<size_t>(wrote);
        continue;
      }
      if (wrote < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) break;
      pollfd writable{fd_, POLLOUT, 0};
      poll(&writable, 1, /*timeout_ms=*/5);
    }
  }
  shutdown(fd_, SHUT_RDWR);
  char buffer[65536];
  for (size_t drained = 0; drained < kMaxDrainBytes;) {
    const ssize_t got = recv(fd_, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (got <= 0) break;
    drained += static_cast<size_t>(got);
  }
  return true;
}

bool Connection::Ended() const {
  pollfd socket{fd_, POLLRDHUP, 0};
  return poll(&socket, 1, 0) == 1 && (socket.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

bool Connection::TakeCancelToken(double per_second, double burst) {
  absl::MutexLock lock(&cancel_mu_);
  const absl::Time now = absl::Now();
  if (cancel_tokens_ < 0) {
    cancel_tokens_ = burst;
  } else {
    cancel_tokens_ = std::min(
        burst, cancel_tokens_ + per_second * absl::ToDoubleSeconds(now - cancel_refilled_));
  }
  cancel_refilled_ = now;
  if (cancel_tokens_ < 1) return false;
  cancel_tokens_ -= 1;
  return true;
}

void Connection::CreditDropped(uint64_t bytes, uint64_t per_second) {
  uint64_t granted = 0;
  {
    absl::MutexLock lock(&cancel_mu_);
    const absl::Time now = absl::Now();
    const double capacity = 2.0 * double(per_second);
    drop_tokens_ =
        drop_tokens_ < 0
            ? capacity
            : std::min(capacity, drop_tokens_ + double(per_second) *
                                                    absl::ToDoubleSeconds(now - drop_refilled_));
    drop_refilled_ = now;
    granted = static_cast<uint64_t>(std::min(drop_tokens_, double(bytes)));
    drop_tokens_ -= double(granted);
  }
  credited_bytes.fetch_add(granted, std::memory_order_relaxed);
}

}  // namespace gpureduce::server
