// ConnectionMetrics: the connection gate's gauge and counters, by reason.

#include "server/metrics/connection_metrics.h"

#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "tests/unit/server/metric_reading.h"

namespace gpureduce::server {
namespace {

using testing::SeriesValue;

TEST(ConnectionMetricsTest, OpenConnectionsRiseAndFall) {
  prometheus::Registry registry;
  ConnectionMetrics metrics(registry);
  EXPECT_EQ(SeriesValue(registry, "gpureduce_connections_open"), 0);
  metrics.Opened();
  metrics.Opened();
  metrics.Opened();
  metrics.Closed();
  EXPECT_EQ(SeriesValue(registry, "gpureduce_connections_open"), 2);
}

// Counts reason i of `reasons` i + 1 times with `count`, so that a reason counted under another's
// label shows, and checks each series of `family`.
template <typename Reason, size_t kReasons, typename Count>
void ExpectCountedByReason(const prometheus::Registry& registry, const std::string& family,
                           const std::pair<Reason, const char*> (&reasons)[kReasons], Count count) {
  for (size_t i = 0; i < kReasons; ++i) {
    for (size_t k = 0; k <= i; ++k) count(reasons[i].first);
  }
  for (size_t i = 0; i < kReasons; ++i) {
    EXPECT_EQ(SeriesValue(registry, family, {{"reason", reasons[i].second}}), double(i + 1))
        << family << " " << reasons[i].second;
  }
}

TEST(ConnectionMetricsTest, RefusalsAndEvictionsCountUnderTheirOwnReason) {
  prometheus::Registry registry;
  ConnectionMetrics metrics(registry);
  const std::pair<ConnectionRefusal, const char*> refusals[] = {
      {ConnectionRefusal::kServerFull, "server_full"},
      {ConnectionRefusal::kClientFull, "client_full"},
      {ConnectionRefusal::kCoolingDown, "cooling_down"},
      {ConnectionRefusal::kSamePeer, "same_peer"}};
  ExpectCountedByReason(registry, "gpureduce_connections_refused_total", refusals,
                        [&](ConnectionRefusal reason) { metrics.Refused(reason); });
  const std::pair<Eviction, const char*> evictions[] = {
      {Eviction::kCancelledCalls, "cancelled_calls"},
      {Eviction::kLiveStreams, "live_streams"},
      {Eviction::kUnaccountedBytes, "unaccounted_bytes"}};
  ExpectCountedByReason(registry, "gpureduce_connections_evicted_total", evictions,
                        [&](Eviction reason) { metrics.Evicted(reason); });
  EXPECT_EQ(SeriesValue(registry, "gpureduce_connections_open"), 0);
}

}  // namespace
}  // namespace gpureduce::server
