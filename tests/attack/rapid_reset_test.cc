// HTTP/2 rapid reset against the real server on loopback (docs/reliability.md, "Hostile
// clients"; the other attacks are slow_upload_test.cc and held_resources_test.cc): streams
// opened and reset at once get their connection sent away with a GOAWAY, its address refused a
// moment, memory stays bounded and a client beside it is served throughout.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "tests/attack/attack_expectations.h"
#include "tests/attack/attacks.h"
#include "tests/integration/server_process.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"
#include "tests/support/wire.h"

namespace gpureduce::testing {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

// A well-behaved client on its own connection: a health check and a 1024-float Reduce in a
// loop until stopped, every answer checked, every latency kept.
class WellBehavedClient {
 public:
  explicit WellBehavedClient(const std::string& target)
      : reducer_(client::ReducerClient::Connect(target, /*own_connection=*/true)),
        health_(grpc::health::v1::Health::NewStub(
            grpc::CreateChannel(target, grpc::InsecureChannelCredentials()))) {
    thread_ = std::thread([this] { Run(); });
  }
  ~WellBehavedClient() { Stop(); }

  void Stop() {
    stopping_ = true;
    if (thread_.joinable()) thread_.join();
  }
  int answered() const { return answered_; }
  int failed() const { return failed_; }
  const std::string& first_failure() const { return first_failure_; }
  double P99Millis() {
    if (latencies_ms_.empty()) return 0;
    std::sort(latencies_ms_.begin(), latencies_ms_.end());
    return latencies_ms_[latencies_ms_.size() * 99 / 100];
  }

 private:
  void Run() {
    const std::vector<float> data = MixedSignData(1024, FreshSeed());
    const Reference expected = ComputeReference(gpureduce::Op::kSum, data);
    while (!stopping_) {
      const Clock::time_point start = Clock::now();
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
      grpc::health::v1::HealthCheckResponse health;
      const grpc::Status checked =
          health_->Check(&context, grpc::health::v1::HealthCheckRequest(), &health);
      const absl::StatusOr<v1::ReduceResponse> got = reducer_->Reduce(Spec(v1::SUM), data);
      latencies_ms_.push_back(
          std::chrono::duration<double, std::milli>(Clock::now() - start).count());
      const bool right =
          checked.ok() && got.ok() &&
          CheckAgainstReference(gpureduce::Op::kSum, expected, got->value(), -1, 1e-9).empty();
      if (right) {
        ++answered_;
      } else if (failed_++ == 0) {
        first_failure_ = !checked.ok() ? checked.error_message() : got.status().ToString();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  std::unique_ptr<client::ReducerClient> reducer_;
  std::unique_ptr<grpc::health::v1::Health::Stub> health_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> answered_{0}, failed_{0};
  std::string first_failure_;
  std::vector<double> latencies_ms_;
  std::thread thread_;
};

// 4 connections x 30,000 streams opened and reset at once, twice: the attack of 2023 that took
// d837745 to 1.77 GB. Each connection is sent away within a few hundred streams, its address
// is refused while it cools down (1 s here, so that the second round is sent away again),
// memory stays within 128 MiB of where it was, and a client beside it is answered throughout.
TEST(RapidResetTest, ResetStreamsGetTheirConnectionsSentAwayAndMemoryStaysBounded) {
  // At the default log level, as a server in production runs (the tests' default is debug).
  // Under ASan the streams freed wait in its quarantine (256 MiB by default) and count in the
  // peak as if held: a smaller one keeps the bound about the server's memory, not ASan's (the
  // second round's peak was 525-570 MiB above rest with the default, over the bound in 2 of 5
  // runs on the idle dev VM).
  std::vector<std::string> environment;
  if (kSanitizerScale > 1) {
    const char* options = std::getenv("ASAN_OPTIONS");
    environment.push_back(absl::StrCat("ASAN_OPTIONS=", options != nullptr ? options : "",
                                       options != nullptr ? ":" : "", "quarantine_size_mb=32"));
  }
  absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::StartWithEnvironment(
      {"--log-level=info", "--eviction-cooldown=1s"}, std::move(environment));
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  WellBehavedClient client((*server)->target());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const uint64_t rss_before = *(*server)->ResidentBytes();
  const int lines_before = LineCount((*server)->Log());

  for (int round = 1; round <= 2; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    RapidResetOptions attack;
    attack.target = (*server)->target();
    attack.source = kAttacker;
    attack.connections = 4;
    attack.streams = 30000;
    attack.limit = absl::Seconds(20);
    const RapidResetResult result = RapidReset(attack);
    std::printf("round %d: %lld streams reset in %s over %s\n", round,
                static_cast<long long>(result.streams), absl::FormatDuration(result.took).c_str(),
                Describe(result.outcomes).c_str());
    // Every connection ends with a GOAWAY saying why: sent away for the reset streams (as soon
    // as the server sees them, maybe before its SETTINGS), or refused while the address cools
    // down (the other threads' connections too). A refused one always reads its GOAWAY (the
    // client reads what arrived even once its writes fail: H2Client::Pump). One sent away may,
    // rarely, not: Connection::Evict gives a client whose socket buffer is full (it has not read
    // gRPC's answers to its resets) 20 ms to make room, and writes beside gRPC's writer. On a
    // loaded CI machine 1 of 4,203 connections in a round closed so (0 in 16 rounds on an idle
    // one): at most one a round.
    EXPECT_GE(result.outcomes.goaways + result.outcomes.refused, 1) << Describe(result.outcomes);
    EXPECT_THAT(result.outcomes.goaway_reasons, Contains(HasSubstr("rapid reset")));
    EXPECT_LE(result.outcomes.closed, 1) << Describe(result.outcomes);
    const uint64_t rss = *(*server)->ResidentBytes();
    const uint64_t peak = *(*server)->PeakResidentBytes();
    std::printf("round %d: server VmRSS %.1f MiB (before the attack %.1f), VmHWM %.1f MiB\n", round,
                rss / 1048576.0, rss_before / 1048576.0, peak / 1048576.0);
    EXPECT_LT(peak, rss_before + kSanitizerScale * (uint64_t{128} << 20));
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // past the cooldown
  }
  client.Stop();
  const int lines = LineCount((*server)->Log()) - lines_before;
  std::printf("well-behaved client: %d answered, %d failed, p99 %.1f ms; %d log lines\n",
              client.answered(), client.failed(), client.P99Millis(), lines);
  EXPECT_GT(client.answered(), 20);
  EXPECT_EQ(client.failed(), 0) << client.first_failure();
  EXPECT_LT(client.P99Millis(), 100.0 * kSanitizerScale);
  EXPECT_LE(lines, 300) << (*server)->Log().substr(0, 4000);
}

// A reset pace the server keeps up with holds no memory, but takes its CPU: a connection whose
// calls are cancelled faster than --max-cancelled-calls-per-second, beyond its burst (1000 at
// this rate), is sent away saying so. The Reducer's calls count themselves (ReduceCall), the
// other methods' through the server's interceptor: one of each.
class PacedResetTest : public ::testing::TestWithParam<const char*> {};

TEST_P(PacedResetTest, CallsCancelledFasterThanTheRateGetTheirConnectionSentAway) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start(
      {"--log-level=info", "--max-cancelled-calls-per-second=100", "--eviction-cooldown=1s"});
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  RapidResetOptions attack;
  attack.target = (*server)->target();
  attack.source = kAttacker;
  attack.method = GetParam();
  attack.connections = 1;
  attack.streams = 2500;  // about 900 a second: evicted after some 1,100-1,300
  // Under ASan on a loaded 2-core machine the server fell behind 900 a second, and the census
  // of its piled-up streams sent the connection away first (5 of 6 runs beside two spinning
  // processes): half the pace there, still 4x the rate, keeps it to the rate's GOAWAY.
  attack.pause = absl::Milliseconds(kSanitizerScale > 1 ? 2 : 1);
  attack.limit = absl::Seconds(20);
  const RapidResetResult result = RapidReset(attack);
  std::printf("%lld streams reset in %s over %s\n", static_cast<long long>(result.streams),
              absl::FormatDuration(result.took).c_str(), Describe(result.outcomes).c_str());
  EXPECT_THAT(result.outcomes.goaway_reasons,
              Contains(HasSubstr("cancelled faster than 100 a second")))
      << Describe(result.outcomes);
  EXPECT_EQ(result.outcomes.closed, 0) << Describe(result.outcomes);
}

INSTANTIATE_TEST_SUITE_P(Methods, PacedResetTest,
                         ::testing::Values(kReduceMethod, "/grpc.health.v1.Health/Check"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.index == 0 ? "Reduce" : "HealthCheck");
                         });

}  // namespace
}  // namespace gpureduce::testing
