#pragma once

// The path of --listen-unix, checked before gRPC binds it: gRPC itself would unlink any socket
// there, even one another server is listening on, and report a failure to bind in one line.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace gpureduce {

// The socket's absolute path (a relative one is taken from the working directory), once a stale
// socket there (connecting to it is refused) is removed. INVALID_ARGUMENT naming the flag when
// the path is too long for a socket address, its directory is missing, a file that is not a
// socket is there, or a socket whose liveness cannot be told (connecting fails otherwise, as
// without permission) or that cannot be removed; ALREADY_EXISTS when a process accepts
// connections on it. For gpureduce-server and gpureduce-load sink, whose flag has that name.
absl::StatusOr<std::string> PrepareUnixSocket(const std::string& path);

// The identity of the socket file at `path` now (its inode and change time; 0 where there is
// none), taken once the server has bound it.
uint64_t UnixSocketIdentity(const std::string& path);

// Removes the socket at `path` on the way out, only if it is still the one whose identity was
// taken: a replacement server may have bound the path while this one drained.
void RemoveUnixSocket(const std::string& path, uint64_t identity);

}  // namespace gpureduce
