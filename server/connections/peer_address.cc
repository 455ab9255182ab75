#include "server/connections/peer_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"

namespace gpureduce::server {
namespace {

constexpr uint8_t kV4MappedPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

PeerAddress V4(const void* ip, uint16_t port) {
  PeerAddress address;
  std::memcpy(address.ip.data(), ip, 4);
  address.port = port;
  return address;
}

PeerAddress V6(const in6_addr& ip, uint16_t port) {
  if (std::memcmp(ip.s6_addr, kV4MappedPrefix, sizeof(kV4MappedPrefix)) == 0) {
    return V4(ip.s6_addr + 12, port);
  }
  PeerAddress address;
  address.v6 = true;
  std::memcpy(address.ip.data(), ip.s6_addr, 16);
  address.port = port;
  return address;
}

}  // namespace

std::string PeerAddress::Host() const {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(v6 ? AF_INET6 : AF_INET, ip.data(), text, sizeof(text));
  return text;
}

std::string PeerAddress::ToString() const {
  return v6 ? absl::StrCat("[", Host(), "]:", port) : absl::StrCat(Host(), ":", port);
}

PeerAddress PeerAddress::WithoutPort() const {
  PeerAddress address = *this;
  address.port = 0;
  return address;
}

std::optional<PeerAddress> PeerAddressOf(const sockaddr* address, socklen_t length) {
  if (address->sa_family == AF_INET && length >= sizeof(sockaddr_in)) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(address);
    return V4(&v4->sin_addr, ntohs(v4->sin_port));
  }
  if (address->sa_family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(address);
    return V6(v6->sin6_addr, ntohs(v6->sin6_port));
  }
  return std::nullopt;
}

std::optional<PeerAddress> ParseGrpcPeer(absl::string_view peer) {
  const bool v6 = absl::ConsumePrefix(&peer, "ipv6:");
  if (!v6 && !absl::ConsumePrefix(&peer, "ipv4:")) return std::nullopt;
  const size_t colon = peer.rfind(':');
  uint32_t port = 0;
  if (colon == absl::string_view::npos || !absl::SimpleAtoi(peer.substr(colon + 1), &port) ||
      port > 65535) {
    return std::nullopt;
  }
  std::string host(peer.substr(0, colon));
  if (v6) {
    host = absl::StrReplaceAll(host, {{"%5B", "["}, {"%5D", "]"}, {"%25", "%"}});
    if (host.size() < 2 || host.front() != '[' || host.back() != ']') return std::nullopt;
    host = host.substr(1, host.size() - 2);
    host = host.substr(0, host.find('%'));  // a zone id does not tell connections apart
    in6_addr ip{};
    if (inet_pton(AF_INET6, host.c_str(), &ip) != 1) return std::nullopt;
    return V6(ip, static_cast<uint16_t>(port));
  }
  in_addr ip{};
  if (inet_pton(AF_INET, host.c_str(), &ip) != 1) return std::nullopt;
  return V4(&ip, static_cast<uint16_t>(port));
}

}  // namespace gpureduce::server
