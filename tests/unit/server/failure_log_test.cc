#include "server/failure_log.h"

#include <string>

#include "gtest/gtest.h"

namespace gpureduce::server {
namespace {

FailureLog::Options Quick() {
  FailureLog::Options options;
  options.burst = 3;
  options.period = absl::Seconds(60);
  options.global_burst = 5;
  options.global_per_second = 0.001;
  options.report_every = absl::Seconds(60);
  return options;
}

TEST(FailureLogTest, AKeyWritesItsBurstThenItsLinesAreCountedNotWritten) {
  FailureLog log(Quick());
  int made = 0;
  auto line = [&] {
    ++made;
    return std::string("bad request");
  };
  int written = 0;
  for (int i = 0; i < 1000; ++i) written += log.Warn("10.0.0.1", "INVALID_ARGUMENT", line);
  EXPECT_EQ(written, 3);
  EXPECT_EQ(made, 3) << "a line left out is not even formatted";
  EXPECT_EQ(log.suppressed(), 997u);
}

TEST(FailureLogTest, EachClientAndKindHasItsOwnShareWithinTheServersShare) {
  FailureLog log(Quick());
  auto line = [] { return std::string("x"); };
  EXPECT_TRUE(log.Warn("10.0.0.1", "INVALID_ARGUMENT", line));
  EXPECT_TRUE(log.Warn("10.0.0.1", "RESOURCE_EXHAUSTED", line));
  EXPECT_TRUE(log.Warn("10.0.0.2", "INVALID_ARGUMENT", line));
  EXPECT_TRUE(log.Warn("10.0.0.3", "INVALID_ARGUMENT", line));
  EXPECT_TRUE(log.Warn("10.0.0.4", "INVALID_ARGUMENT", line));
  // Five lines: the server's whole burst, however many clients there are.
  EXPECT_FALSE(log.Warn("10.0.0.5", "INVALID_ARGUMENT", line));
  EXPECT_EQ(log.suppressed(), 1u);
}

TEST(FailureLogTest, ManyClientsShareOneKeyBeyondTheKeysRemembered) {
  FailureLog::Options options = Quick();
  options.max_keys = 4;
  options.global_burst = 1000;
  FailureLog log(options);
  auto line = [] { return std::string("x"); };
  int written = 0;
  for (int i = 0; i < 100; ++i) {
    written += log.Warn("10.0.0." + std::to_string(i), "INVALID_ARGUMENT", line);
  }
  // A line each from the four clients remembered, then one burst for all the others together.
  EXPECT_EQ(written, 4 + 3);
}

}  // namespace
}  // namespace gpureduce::server
