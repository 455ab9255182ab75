// MetricsExposer: a scrape over HTTP returns what the collectables hold at that moment; an address
// that cannot be served is an error, not an exception.

#include "server/metrics/metrics_exposer.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/metrics/server_metrics.h"
#include "server/metrics/usage_collector.h"
#include "tests/integration/http_get.h"
#include "tests/support/stand_in_backend.h"

namespace gpureduce::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(MetricsExposerTest, AScrapeShowsTheCountsOfThatMomentFromEveryCollectable) {
  ServerMetrics metrics;
  const testing::StandInBackend backend(kernels::BackendKind::kCpu);
  absl::StatusOr<std::unique_ptr<MetricsExposer>> exposer = MetricsExposer::Start(
      "127.0.0.1:0", {metrics.registry(), std::make_shared<UsageCollector>(backend, "9.9.9")});
  ASSERT_TRUE(exposer.ok()) << exposer.status();
  ASSERT_GT((*exposer)->port(), 0);

  absl::StatusOr<std::string> before = testing::HttpGet((*exposer)->port(), "/metrics");
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_THAT(*before, HasSubstr("gpureduce_server_info{backend=\"cpu\",version=\"9.9.9\"} 1\n"));
  EXPECT_THAT(*before, HasSubstr("gpureduce_admission_refusals_total{reason=\"client_full\"} 0\n"));

  metrics.Refused(Refusal::kClientFull);
  metrics.Refused(Refusal::kClientFull);
  metrics.StreamIdleEnded();
  absl::StatusOr<std::string> after = testing::HttpGet((*exposer)->port(), "/metrics");
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_THAT(*after, HasSubstr("gpureduce_admission_refusals_total{reason=\"client_full\"} 2\n"));
  EXPECT_THAT(*after, HasSubstr("gpureduce_streams_idle_ended_total 1\n"));
  EXPECT_THAT(*after, Not(HasSubstr("reason=\"client_full\"} 0\n")));

  EXPECT_FALSE(testing::HttpGet((*exposer)->port(), "/nothing-here").ok())
      << "only /metrics is served";
}

TEST(MetricsExposerTest, ItKeepsWhatItServesAlive) {
  std::unique_ptr<MetricsExposer> exposer;
  {
    auto registry = std::make_shared<prometheus::Registry>();
    prometheus::BuildCounter()
        .Name("kept_alive_total")
        .Help("h")
        .Register(*registry)
        .Add({})
        .Increment(5);
    absl::StatusOr<std::unique_ptr<MetricsExposer>> started =
        MetricsExposer::Start("127.0.0.1:0", {registry});
    ASSERT_TRUE(started.ok()) << started.status();
    exposer = std::move(*started);
  }  // the only other reference is gone
  absl::StatusOr<std::string> scrape = testing::HttpGet(exposer->port(), "/metrics");
  ASSERT_TRUE(scrape.ok()) << scrape.status();
  EXPECT_THAT(*scrape, HasSubstr("kept_alive_total 5\n"));
}

TEST(MetricsExposerTest, AnAddressInUseOrMalformedIsUnavailableWithTheAddress) {
  absl::StatusOr<std::unique_ptr<MetricsExposer>> first = MetricsExposer::Start("127.0.0.1:0", {});
  ASSERT_TRUE(first.ok()) << first.status();
  const std::string taken = absl::StrCat("127.0.0.1:", (*first)->port());
  for (const std::string& address : {taken, std::string("not an address")}) {
    absl::StatusOr<std::unique_ptr<MetricsExposer>> refused = MetricsExposer::Start(address, {});
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable) << address;
    EXPECT_THAT(std::string(refused.status().message()),
                HasSubstr(absl::StrCat("cannot serve metrics on ", address)));
  }
}

}  // namespace
}  // namespace gpureduce::server
