#pragma once

// The server's listening sockets for --listen HOST:PORT, opened by the server itself (not by
// gRPC) so that it sees every connection before gRPC does (connection_gate.h). HOST is a
// numeric address, a name (each address it resolves to is bound, as gRPC binds them), `[::]`
// (every address, IPv4 clients too) or `0.0.0.0`; port 0 picks a free port, the same for all.

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpureduce::server {

class Listener {
 public:
  static absl::StatusOr<Listener> Open(const std::string& listen);
  Listener() = default;  // listens nowhere
  Listener(Listener&& other) noexcept;
  Listener& operator=(Listener&& other) noexcept;
  ~Listener();

  int port() const { return port_; }
  // Non-blocking, close-on-exec listening sockets; the Listener keeps them.
  const std::vector<int>& fds() const { return fds_; }

 private:
  void Close();

  std::vector<int> fds_;
  int port_ = 0;
};

}  // namespace gpureduce::server
