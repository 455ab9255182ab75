#include "server/connections/peer_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "gtest/gtest.h"

namespace gpureduce::server {
namespace {

TEST(PeerAddressTest, GrpcPeerStringsAndSocketAddressesNameTheSameConnection) {
  sockaddr_in v4{};
  v4.sin_family = AF_INET;
  v4.sin_port = htons(53122);
  inet_pton(AF_INET, "10.0.0.7", &v4.sin_addr);
  const std::optional<PeerAddress> accepted =
      PeerAddressOf(reinterpret_cast<sockaddr*>(&v4), sizeof(v4));
  ASSERT_TRUE(accepted.has_value());
  EXPECT_EQ(ParseGrpcPeer("ipv4:10.0.0.7:53122"), accepted);
  EXPECT_EQ(accepted->ToString(), "10.0.0.7:53122");
  EXPECT_EQ(accepted->Host(), "10.0.0.7");

  sockaddr_in6 v6{};
  v6.sin6_family = AF_INET6;
  v6.sin6_port = htons(5000);
  inet_pton(AF_INET6, "::1", &v6.sin6_addr);
  const std::optional<PeerAddress> loopback6 =
      PeerAddressOf(reinterpret_cast<sockaddr*>(&v6), sizeof(v6));
  ASSERT_TRUE(loopback6.has_value());
  // gRPC writes IPv6 hosts percent-encoded in some versions and bracketed in others.
  EXPECT_EQ(ParseGrpcPeer("ipv6:%5B::1%5D:5000"), loopback6);
  EXPECT_EQ(ParseGrpcPeer("ipv6:[::1]:5000"), loopback6);
  EXPECT_EQ(loopback6->ToString(), "[::1]:5000");
}

TEST(PeerAddressTest, AnIpv4MappedAddressIsTheIpv4OneAsGrpcWritesIt) {
  sockaddr_in6 mapped{};
  mapped.sin6_family = AF_INET6;
  mapped.sin6_port = htons(40000);
  inet_pton(AF_INET6, "::ffff:127.0.0.2", &mapped.sin6_addr);
  const std::optional<PeerAddress> accepted =
      PeerAddressOf(reinterpret_cast<sockaddr*>(&mapped), sizeof(mapped));
  ASSERT_TRUE(accepted.has_value());
  EXPECT_FALSE(accepted->v6);
  EXPECT_EQ(ParseGrpcPeer("ipv4:127.0.0.2:40000"), accepted);
}

TEST(PeerAddressTest, TheAddressWithoutItsPortKeysEveryConnectionOfAClient) {
  const PeerAddress a = *ParseGrpcPeer("ipv4:127.0.0.1:1000");
  const PeerAddress b = *ParseGrpcPeer("ipv4:127.0.0.1:2000");
  EXPECT_NE(a, b);
  EXPECT_EQ(a.WithoutPort(), b.WithoutPort());
  EXPECT_NE(a.WithoutPort(), ParseGrpcPeer("ipv4:127.0.0.2:1000")->WithoutPort());
}

TEST(PeerAddressTest, OtherPeersAndMalformedTextAreNoAddress) {
  for (const char* peer : {"unix:/tmp/socket", "ipv4:127.0.0.1", "ipv4:127.0.0.1:70000",
                           "ipv4:300.0.0.1:5", "ipv6:::1:5", "ipv6:[zz]:5", "", "ipv4::5"}) {
    EXPECT_FALSE(ParseGrpcPeer(peer).has_value()) << peer;
  }
}

}  // namespace
}  // namespace gpureduce::server
