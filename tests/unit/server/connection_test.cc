#include "server/connections/connection.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "gtest/gtest.h"

namespace gpureduce::server {
namespace {

TEST(GoawayFrameTest, IsAnHttp2GoawayWithEnhanceYourCalmAndTheReason) {
  const std::string frame = GoawayFrame("too many");
  ASSERT_EQ(frame.size(), 9u + 8u + 8u);
  const auto* bytes = reinterpret_cast<const uint8_t*>(frame.data());
  EXPECT_EQ((bytes[0] << 16) | (bytes[1] << 8) | bytes[2], 16);  // length
  EXPECT_EQ(bytes[3], 0x7);                                      // GOAWAY
  EXPECT_EQ(bytes[4], 0);                                        // flags
  EXPECT_EQ(std::memcmp(bytes + 5, "\0\0\0\0", 4), 0);           // stream 0
  EXPECT_EQ(std::memcmp(bytes + 9, "\x7f\xff\xff\xff", 4), 0);   // last stream 2^31-1
  EXPECT_EQ(std::memcmp(bytes + 13, "\0\0\0\x0b", 4), 0);        // ENHANCE_YOUR_CALM
  EXPECT_EQ(frame.substr(17), "too many");
  EXPECT_EQ(GoawayFrame(std::string(5000, 'x')).size(), 9u + 8u + 1024u) << "debug data capped";
}

class ConnectionTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0); }
  void TearDown() override { close(fds_[1]); }
  // The server's end goes to the Connection, which closes it.
  Connection Make() { return Connection(*ParseGrpcPeer("ipv4:127.0.0.1:1"), fds_[0], true); }
  int fds_[2];
};

TEST_F(ConnectionTest, EvictSendsTheGoawayShutsTheSocketAndHappensOnce) {
  Connection connection = Make();
  EXPECT_TRUE(connection.Evict("rapid reset"));
  EXPECT_TRUE(connection.evicted());
  EXPECT_FALSE(connection.Evict("again"));
  char received[64] = {};
  const ssize_t got = recv(fds_[1], received, sizeof(received), 0);
  ASSERT_EQ(got, 9 + 8 + 11);
  EXPECT_EQ(std::string(received + 17, 11), "rapid reset");
  EXPECT_EQ(recv(fds_[1], received, sizeof(received), 0), 0) << "then the end";
}

TEST_F(ConnectionTest, TheCancelBudgetIsABurstThenARate) {
  Connection connection = Make();
  int taken = 0;
  for (int i = 0; i < 100; ++i) taken += connection.TakeCancelToken(0.001, 10);
  EXPECT_EQ(taken, 10);
}

TEST_F(ConnectionTest, DroppedBytesAreCreditedWithinTwoSecondsWorth) {
  Connection connection = Make();
  connection.CreditDropped(1500, 1000);
  EXPECT_EQ(connection.credited_bytes.load(), 1500u);
  connection.CreditDropped(1500, 1000);  // 500 left of the 2000 of budget
  EXPECT_LE(connection.credited_bytes.load(), 2001u);
  EXPECT_GE(connection.credited_bytes.load(), 2000u);
}

}  // namespace
}  // namespace gpureduce::server
