#include "server/connections/byte_account.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace gpureduce::server {
namespace {

constexpr uint64_t kSlack = uint64_t{256} << 10;
constexpr uint64_t kChunk = uint64_t{1} << 20;

// A connection whose socket counts the test sets: `received` bytes on the wire, `unread` of them
// still in the kernel.
class ByteAccountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0);
    connection_ = std::make_shared<Connection>(*ParseGrpcPeer("ipv4:127.0.0.1:1"), fds_[0], true);
  }
  void TearDown() override { close(fds_[1]); }

  HeldBytes Look() {
    std::optional<HeldBytes> bytes =
        UpdateHeldBytes(*connection_, kSlack, [this](int, SocketBytes* socket) {
          socket->received = received_;
          socket->unread = unread_;
          return true;
        });
    EXPECT_TRUE(bytes.has_value());
    return bytes.value_or(HeldBytes{});
  }

  int fds_[2];
  std::shared_ptr<Connection> connection_;
  uint64_t received_ = 0;
  int64_t unread_ = 0;
};

TEST_F(ByteAccountTest, BytesNothingCreditsAreHeldUnlessTheKernelStillHasThem) {
  received_ = 3 * kChunk;
  unread_ = 3 * kChunk;
  EXPECT_FALSE(Look().over()) << "the kernel holds them, not gRPC";
  unread_ = 0;
  const HeldBytes bytes = Look();
  EXPECT_EQ(bytes.held, static_cast<int64_t>(3 * kChunk));
  EXPECT_EQ(bytes.allowed, static_cast<int64_t>(kSlack));
  EXPECT_TRUE(bytes.over());
  connection_->allowed_bytes = 4 * kChunk;  // an admitted call's limit covers them
  EXPECT_FALSE(Look().over());
  connection_->credited_bytes += 3 * kChunk;  // its message delivered
  connection_->allowed_bytes = 0;
  EXPECT_EQ(Look().held, 0);
}

TEST_F(ByteAccountTest, UnusedCreditsDoNotCarryOver) {
  connection_->credited_bytes += 10 * kChunk;  // generous credits, no bytes behind them
  EXPECT_EQ(Look().held, 0);
  received_ += kChunk;  // then bytes nothing credits
  EXPECT_EQ(Look().held, static_cast<int64_t>(kChunk));
}

TEST_F(ByteAccountTest, AMessageCreditedWhileTheGuardLooksIsNotLost) {
  // The race CI met under load: the message arrives just after the guard reads the socket and
  // is delivered (credited) before the look ends; its call then ends, taking its allowance.
  // Read in the other order, the credit outruns its bytes, is dropped as unused, and the bytes
  // are held for ever: the client's next pause between calls evicts it.
  connection_->allowed_bytes = kChunk + (64 << 10);
  std::optional<HeldBytes> bytes =
      UpdateHeldBytes(*connection_, kSlack, [this](int, SocketBytes* socket) {
        socket->received = received_;
        received_ += kChunk;
        connection_->credited_bytes += kChunk + kChunk / 64 + 64;
        return true;
      });
  ASSERT_TRUE(bytes.has_value());
  EXPECT_FALSE(bytes->over());
  connection_->allowed_bytes = 0;
  EXPECT_EQ(Look().held, 0) << "the credit met its bytes at the next look";
  EXPECT_FALSE(Look().over());
}

TEST_F(ByteAccountTest, AMessageWhoseCallEndsWhileTheGuardLooksIsNotHeld) {
  // The message is on the socket when the guard reads it; then it is delivered (credited) and
  // its call ends, taking its allowance, before the guard reads the allowances.
  connection_->allowed_bytes = kChunk + (64 << 10);
  std::optional<HeldBytes> bytes =
      UpdateHeldBytes(*connection_, kSlack, [this](int, SocketBytes* socket) {
        received_ += kChunk;
        socket->received = received_;
        connection_->credited_bytes += kChunk + kChunk / 64 + 64;
        connection_->allowed_bytes = 0;
        return true;
      });
  ASSERT_TRUE(bytes.has_value());
  EXPECT_EQ(bytes->held, 0);
  EXPECT_EQ(bytes->allowed, static_cast<int64_t>(kSlack));
  EXPECT_EQ(Look().held, 0);
}

TEST(ReadSocketBytesTest, CountsWhatATcpSocketReceivedAndWhatItHoldsUnread) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const int client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  const int server = accept(listener, nullptr, nullptr);
  ASSERT_GE(server, 0);
  const std::string sent(1000, 'x');
  ASSERT_EQ(send(client, sent.data(), sent.size(), 0), 1000);
  pollfd readable{server, POLLIN, 0};
  ASSERT_EQ(poll(&readable, 1, 5000), 1);
  SocketBytes bytes;
  for (int tries = 0; tries < 100 && bytes.unread < 1000; ++tries) {
    ASSERT_TRUE(ReadSocketBytes(server, &bytes));
    if (bytes.unread < 1000) usleep(1000);
  }
  EXPECT_EQ(bytes.received, 1000u);
  EXPECT_EQ(bytes.unread, 1000);
  char buffer[600];
  ASSERT_EQ(recv(server, buffer, sizeof(buffer), 0), 600);
  ASSERT_TRUE(ReadSocketBytes(server, &bytes));
  EXPECT_EQ(bytes.received, 1000u);
  EXPECT_EQ(bytes.unread, 400);

  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  EXPECT_FALSE(ReadSocketBytes(pair[0], &bytes)) << "not TCP";
  for (int fd : {listener, client, server, pair[0], pair[1]}) close(fd);
}

}  // namespace
}  // namespace gpureduce::server
