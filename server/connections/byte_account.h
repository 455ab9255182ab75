#pragma once

// The memory guard's account of one connection's bytes (memory_guard.h): what TCP received on
// it, less what the kernel still holds and what its calls account for (call_account.h), is what
// gRPC holds of messages still arriving.

#include <cstdint>
#include <optional>

#include "absl/functional/function_ref.h"
#include "server/connections/connection.h"

namespace gpureduce::server {

struct SocketBytes {
  uint64_t received = 0;  // TCP's count of the bytes received on the socket
  int64_t unread = 0;     // of them, those the kernel still holds (gRPC has not read them)
};

// The kernel's counts for socket `fd`; false where it cannot tell (not a TCP socket).
bool ReadSocketBytes(int fd, SocketBytes* bytes);

struct HeldBytes {
  int64_t held = 0;     // what gRPC holds of the connection's messages still arriving
  int64_t allowed = 0;  // what its admitted calls, unread calls and the slack may hold
  bool over() const { return held > allowed; }
};

// Brings `connection`'s running account up to date (the guard's thread only) from its socket's
// counts (`read_socket`) and returns what it holds; nullopt where the socket cannot be read.
// The counts change while the guard reads them, so the order matters:
// - credits before the socket: a message credited meanwhile was received before, so its bytes
//   are in this look's count or the next's, never behind its credit (which would be lost:
//   unused credits do not carry over, or a client could bank them);
// - the calls' allowances after the socket, then the credits again: bytes received before the
//   socket was read belong to a call still allowed them, or to one whose message was credited
//   before it ended (the credits since the first read count for this look, not the account).
// So however long the guard's thread stalls, its read order puts no honest client over. What
// the order cannot help: credits given ahead of bytes by design (a call's 1 KiB, the 64 KiB of
// a call that read nothing, a dropped message's allowance) are lost if a look falls between
// them and their bytes, and streams gRPC holds before their calls exist have only the slack.
std::optional<HeldBytes> UpdateHeldBytes(Connection& connection, uint64_t slack_bytes,
                                         absl::FunctionRef<bool(int, SocketBytes*)> read_socket);

}  // namespace gpureduce::server
