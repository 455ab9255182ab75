#include "server/connections/listener.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpureduce::server {
namespace {

using ::testing::HasSubstr;

// Connects to 127.0.0.1:port; true when the kernel completes the handshake.
bool Reaches(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  const bool reached = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  close(fd);
  return reached;
}

TEST(ListenerTest, PortZeroPicksAFreePortThatAcceptsConnections) {
  absl::StatusOr<Listener> listener = Listener::Open("127.0.0.1:0");
  ASSERT_TRUE(listener.ok()) << listener.status();
  EXPECT_GT(listener->port(), 0);
  EXPECT_EQ(listener->fds().size(), 1u);
  EXPECT_TRUE(Reaches(listener->port()));
}

TEST(ListenerTest, TheIpv6WildcardTakesIpv4ClientsToo) {
  absl::StatusOr<Listener> listener = Listener::Open("[::]:0");
  if (!listener.ok()) GTEST_SKIP() << "no IPv6 here: " << listener.status();
  EXPECT_TRUE(Reaches(listener->port()));
}

TEST(ListenerTest, APortInUseAndMalformedAddressesAreClearErrors) {
  absl::StatusOr<Listener> first = Listener::Open("127.0.0.1:0");
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<Listener> second = Listener::Open(absl::StrCat("127.0.0.1:", first->port()));
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.status().message(), HasSubstr("Address already in use"));
  for (const char* bad :
       {"127.0.0.1", "127.0.0.1:99999", "127.0.0.1:x", "no.such.host.invalid:1"}) {
    absl::StatusOr<Listener> listener = Listener::Open(bad);
    EXPECT_FALSE(listener.ok()) << bad;
    EXPECT_THAT(listener.status().message(), HasSubstr(bad)) << bad;
  }
}

TEST(ListenerTest, MovingAListenerKeepsItsSocketsOpen) {
  absl::StatusOr<Listener> opened = Listener::Open("127.0.0.1:0");
  ASSERT_TRUE(opened.ok());
  const int port = opened->port();
  Listener moved = std::move(*opened);
  EXPECT_TRUE(Reaches(port));
  moved = Listener();
  EXPECT_FALSE(Reaches(port)) << "closed with the listener";
}

}  // namespace
}  // namespace gpureduce::server
