#pragma once

// The path of --listen-unix, checked before gRPC binds it: gRPC itself would unlink any socket
// there, even one another server is listening on, and report a failure to bind in one line.

#include <string>

#include "absl/status/statusor.h"

namespace gpureduce::server {

// The socket's absolute path (a relative one is taken from the working directory), once a stale
// socket there (nothing accepts on it) is removed. INVALID_ARGUMENT naming the flag when the
// path is too long for a socket address, its directory is missing, or a file that is not a
// socket is there; ALREADY_EXISTS when a process accepts connections on it.
absl::StatusOr<std::string> PrepareUnixSocket(const std::string& path);

// Removes the socket at `path` on the way out (nothing when something else is there now).
void RemoveUnixSocket(const std::string& path);

}  // namespace gpureduce::server
