#pragma once

// Who is at the other end of a TCP connection, as the accept loop sees it (getpeername) and as
// a call sees it (gRPC's peer string): the two must name the same connection, so both are read
// into one key. IPv4-mapped IPv6 addresses count as IPv4, as gRPC writes them.

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"

namespace gpureduce::server {

struct PeerAddress {
  bool v6 = false;
  std::array<uint8_t, 16> ip{};  // IPv4 in the first 4 bytes
  uint16_t port = 0;

  // The address without the port: what per-client limits count by ("127.0.0.1", "::1").
  std::string Host() const;
  // Host() and port ("127.0.0.1:5000", "[::1]:5000").
  std::string ToString() const;
  // The same address, port 0: the key of a per-address count.
  PeerAddress WithoutPort() const;

  friend bool operator==(const PeerAddress& a, const PeerAddress& b) {
    return a.v6 == b.v6 && a.ip == b.ip && a.port == b.port;
  }
  template <typename H>
  friend H AbslHashValue(H h, const PeerAddress& a) {
    return H::combine(std::move(h), a.v6, a.ip, a.port);
  }
};

// From a socket address (AF_INET or AF_INET6); nullopt for other families.
std::optional<PeerAddress> PeerAddressOf(const sockaddr* address, socklen_t length);

// From gRPC's peer string: "ipv4:10.0.0.7:53122", "ipv6:[::1]:5000" or its percent-encoded form
// "ipv6:%5B::1%5D:5000"; nullopt for other peers (unix sockets) and malformed text.
std::optional<PeerAddress> ParseGrpcPeer(absl::string_view peer);

}  // namespace gpureduce::server
