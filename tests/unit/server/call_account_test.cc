#include "server/connections/call_account.h"

#include <sys/socket.h>
#include <unistd.h>

#include <memory>

#include "gtest/gtest.h"
#include "prometheus/registry.h"

namespace gpureduce::server {
namespace {

class CallAccountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0);
    connection_ = std::make_shared<Connection>(*ParseGrpcPeer("ipv4:127.0.0.1:1"), fds_[0], true);
  }
  void TearDown() override { close(fds_[1]); }

  std::unique_ptr<ConnectionGate> Gate(double cancelled_per_second) {
    ConnectionLimits limits;
    limits.cancelled_calls_per_second = cancelled_per_second;
    return std::make_unique<ConnectionGate>(limits, metrics_, failures_);
  }

  prometheus::Registry registry_;
  ConnectionMetrics metrics_{registry_};
  FailureLog failures_;
  int fds_[2];
  std::shared_ptr<Connection> connection_;
};

TEST_F(CallAccountTest, ACallCountsUntilItEndsAndIsUnreadUntilItsFirstMessage) {
  std::unique_ptr<ConnectionGate> gate = Gate(0);
  {
    CallAccount account(*gate, connection_, 100);
    EXPECT_EQ(connection_->live_calls.load(), 1);
    EXPECT_EQ(connection_->unread_calls.load(), 1);
    const uint64_t headers = connection_->credited_bytes.load();
    EXPECT_GE(headers, 100u) << "its headers are credited";
    account.MessageReceived();
    account.MessageReceived();  // a stream's later messages change nothing
    EXPECT_EQ(connection_->unread_calls.load(), 0);
    EXPECT_EQ(connection_->live_calls.load(), 1);
  }
  EXPECT_EQ(connection_->live_calls.load(), 0);
  EXPECT_EQ(connection_->unread_calls.load(), 0);
  EXPECT_LT(connection_->credited_bytes.load(), kUnreadCallBytes)
      << "a call that read its message is credited nothing more at its end";
}

TEST_F(CallAccountTest, ACallThatEndsUnreadIsCreditedItsWindow) {
  std::unique_ptr<ConnectionGate> gate = Gate(0);
  uint64_t headers = 0;
  {
    CallAccount account(*gate, connection_, 0);
    headers = connection_->credited_bytes.load();
  }
  EXPECT_EQ(connection_->credited_bytes.load(), headers + kUnreadCallBytes);
  EXPECT_EQ(connection_->unread_calls.load(), 0);
}

TEST_F(CallAccountTest, CancelsBeyondTheBurstEvictTheConnectionAndEachCallCountsOnce) {
  std::unique_ptr<ConnectionGate> gate = Gate(0.001);  // a burst of 1000, then almost nothing
  const int burst = static_cast<int>(gate->limits().CancelledCallsBurst());
  for (int i = 0; i < burst; ++i) {
    CallAccount account(*gate, connection_, 0);
    account.Cancelled();
    account.Cancelled();  // reported twice (OnCancel and the failed read), counted once
  }
  EXPECT_FALSE(connection_->evicted()) << "the burst is the budget";
  CallAccount one_more(*gate, connection_, 0);
  one_more.Cancelled();
  EXPECT_TRUE(connection_->evicted());
  char received[256] = {};
  ASSERT_GT(recv(fds_[1], received, sizeof(received), 0), 17);
  EXPECT_NE(std::string(received + 17, sizeof(received) - 17).find("rapid reset"),
            std::string::npos);
}

TEST_F(CallAccountTest, NoRateMeansNoEviction) {
  std::unique_ptr<ConnectionGate> gate = Gate(0);
  for (int i = 0; i < 5000; ++i) CallAccount(*gate, connection_, 0).Cancelled();
  EXPECT_FALSE(connection_->evicted());
}

}  // namespace
}  // namespace gpureduce::server
