#include "server/connections/byte_account.h"

#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cstddef>

#include "server/connections/call_account.h"  // kUnreadCallBytes

namespace gpureduce::server {

bool ReadSocketBytes(int fd, SocketBytes* bytes) {
  tcp_info info{};
  socklen_t length = sizeof(info);
  int unread = 0;
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0 ||
      length < offsetof(tcp_info, tcpi_bytes_received) + sizeof(info.tcpi_bytes_received) ||
      ioctl(fd, SIOCINQ, &unread) != 0) {
    return false;
  }
  bytes->received = info.tcpi_bytes_received;
  bytes->unread = unread;
  return true;
}

std::optional<HeldBytes> UpdateHeldBytes(Connection& connection, uint64_t slack_bytes,
                                         absl::FunctionRef<bool(int, SocketBytes*)> read_socket) {
  const uint64_t credited = connection.credited_bytes.load(std::memory_order_acquire);
  SocketBytes socket;
  if (!read_socket(connection.fd(), &socket)) return std::nullopt;
  // Credits the client has not used up do not carry over: a client cannot bank them.
  connection.unaccounted = std::max<int64_t>(
      0, connection.unaccounted + static_cast<int64_t>(socket.received - connection.seen_received) -
             static_cast<int64_t>(credited - connection.seen_credited));
  connection.seen_received = socket.received;
  connection.seen_credited = credited;
  // What the calls may hold now, then what was credited since the first read: a call that ended
  // since had its message credited before its allowance went (ReduceCall::Release).
  HeldBytes bytes;
  bytes.allowed = static_cast<int64_t>(slack_bytes) +
                  connection.allowed_bytes.load(std::memory_order_acquire) +
                  connection.unread_calls.load(std::memory_order_acquire) *
                      static_cast<int64_t>(kUnreadCallBytes);
  const int64_t credited_since =
      static_cast<int64_t>(connection.credited_bytes.load(std::memory_order_acquire) - credited);
  bytes.held = std::max<int64_t>(0, connection.unaccounted - credited_since) - socket.unread;
  return bytes;
}

}  // namespace gpureduce::server
