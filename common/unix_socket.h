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

// The socket a server bound at `path` (none for an empty path), removed when this goes out of
// scope only if it is still that file (its inode and change time): a replacement server may
// have bound the path while this one drained. Construct it once the server has bound the path.
class BoundUnixSocket {
 public:
  explicit BoundUnixSocket(std::string path);
  ~BoundUnixSocket();
  BoundUnixSocket(const BoundUnixSocket&) = delete;
  BoundUnixSocket& operator=(const BoundUnixSocket&) = delete;

 private:
  const std::string path_;
  const uint64_t identity_;  // 0: nothing to remove
};

}  // namespace gpureduce
