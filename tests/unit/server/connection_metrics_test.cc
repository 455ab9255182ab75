// ConnectionMetrics: the connection gate's gauge and counters, by reason.

#include "server/metrics/connection_metrics.h"

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

TEST(ConnectionMetricsTest, RefusalsAndEvictionsCountUnderTheirOwnReason) {
  prometheus::Registry registry;
  ConnectionMetrics metrics(registry);
  const std::pair<ConnectionRefusal, const char*> refusals[] = {
      {ConnectionRefusal::kServerFull, "server_full"},
      {ConnectionRefusal::kClientFull, "client_full"},
      {ConnectionRefusal::kCoolingDown, "cooling_down"},
      {ConnectionRefusal::kSamePeer, "same_peer"}};
  // Reason i is counted i + 1 times, so a reason counted under another's label shows.
  for (size_t i = 0; i < std::size(refusals); ++i) {
    for (size_t k = 0; k <= i; ++k) metrics.Refused(refusals[i].first);
  }
  for (size_t i = 0; i < std::size(refusals); ++i) {
    EXPECT_EQ(SeriesValue(registry, "gpureduce_connections_refused_total",
                          {{"reason", refusals[i].second}}),
              double(i + 1))
        << refusals[i].second;
  }
  const std::pair<Eviction, const char*> evictions[] = {
      {Eviction::kCancelledCalls, "cancelled_calls"},
      {Eviction::kLiveStreams, "live_streams"},
      {Eviction::kUnaccountedBytes, "unaccounted_bytes"}};
  for (size_t i = 0; i < std::size(evictions); ++i) {
    for (size_t k = 0; k <= i; ++k) metrics.Evicted(evictions[i].first);
  }
  for (size_t i = 0; i < std::size(evictions); ++i) {
    EXPECT_EQ(SeriesValue(registry, "gpureduce_connections_evicted_total",
                          {{"reason", evictions[i].second}}),
              double(i + 1))
        << evictions[i].second;
  }
  EXPECT_EQ(SeriesValue(registry, "gpureduce_connections_open"), 0);
}

}  // namespace
}  // namespace gpureduce::server
