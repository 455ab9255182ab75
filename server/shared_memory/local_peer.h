#pragma once

// Shared memory names memory on the server's host, so by default only clients on that host may
// use it: the peer must be a loopback address or a Unix socket.

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace gpureduce::server {

// OK for gRPC peers "ipv4:127.x.x.x:port", "ipv6:[::1]:port" (and IPv4-mapped loopback) and
// "unix:..." / "unix-abstract:..."; PERMISSION_DENIED, naming the peer and the flag that allows it,
// for others.
absl::Status CheckLocalPeer(absl::string_view peer);

}  // namespace gpureduce::server
