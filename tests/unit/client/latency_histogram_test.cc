// The load generator's histogram against a sorted vector of the same samples.

#include "client/load/latency_histogram.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/random_data.h"

namespace gpureduce::client {
namespace {

// The sorted reference's value at `percentile` by the same rank rule (nearest rank).
uint64_t Exact(const std::vector<uint64_t>& sorted, double percentile) {
  const size_t rank = std::max<size_t>(1, size_t(std::ceil(percentile / 100 * sorted.size())));
  return sorted[rank - 1];
}

TEST(LatencyHistogramTest, PercentilesMatchASortedReferenceWithinABucket) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  std::mt19937_64 random(seed);
  // Log-normal latencies from about 1 us to seconds, and a few exact small values.
  std::lognormal_distribution<double> latency(std::log(200e3), 2.0);
  for (size_t n : {size_t{1}, size_t{2}, size_t{31}, size_t{1000003}}) {
    LatencyHistogram histogram;
    std::vector<uint64_t> samples;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t value = i % 97 == 3 ? i % 200 : uint64_t(latency(random));
      samples.push_back(value);
      histogram.Record(value);
    }
    std::sort(samples.begin(), samples.end());
    EXPECT_EQ(histogram.count(), n);
    EXPECT_EQ(histogram.min(), samples.front());
    EXPECT_EQ(histogram.max(), samples.back());
    for (double p : {1.0, 50.0, 90.0, 99.0, 99.9, 100.0}) {
      const uint64_t exact = Exact(samples, p);
      const uint64_t got = histogram.ValueAtPercentile(p);
      // The bucket's upper edge: never below the exact value, at most 1/128 above it.
      EXPECT_GE(got, exact) << "n=" << n << " p" << p;
      EXPECT_LE(double(got), double(exact) * (1 + 1.0 / 128) + 1) << "n=" << n << " p" << p;
    }
  }
}

TEST(LatencyHistogramTest, BucketsCoverEveryValueInOrder) {
  for (uint64_t value : {uint64_t{0}, uint64_t{1}, uint64_t{255}, uint64_t{256}, uint64_t{257},
                         uint64_t{1} << 20, (uint64_t{1} << 20) + 12345, uint64_t{1} << 40}) {
    const int bucket = LatencyHistogram::BucketOf(value);
    EXPECT_LE(value, LatencyHistogram::UpperEdge(bucket)) << value;
    if (bucket > 0) {
      EXPECT_GT(value, LatencyHistogram::UpperEdge(bucket - 1)) << value;
    }
  }
  for (int bucket = 1; bucket < 3000; ++bucket) {
    EXPECT_GT(LatencyHistogram::UpperEdge(bucket), LatencyHistogram::UpperEdge(bucket - 1));
    EXPECT_EQ(LatencyHistogram::BucketOf(LatencyHistogram::UpperEdge(bucket)), bucket);
  }
}

TEST(LatencyHistogramTest, MergingEqualsRecordingEverything) {
  LatencyHistogram a, b, all;
  for (uint64_t v = 1; v < 100000; v += 7) {
    (v % 3 == 0 ? a : b).Record(v * 13);
    all.Record(v * 13);
  }
  a.Merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.min(), all.min());
  EXPECT_EQ(a.max(), all.max());
  EXPECT_DOUBLE_EQ(a.mean(), all.mean());
  for (double p : {10.0, 50.0, 99.0}) EXPECT_EQ(a.ValueAtPercentile(p), all.ValueAtPercentile(p));
}

TEST(LatencyHistogramTest, EmptyIsZero) {
  LatencyHistogram empty;
  EXPECT_EQ(empty.count(), 0u);
  EXPECT_EQ(empty.ValueAtPercentile(50), 0u);
  EXPECT_EQ(empty.min(), 0u);
}

}  // namespace
}  // namespace gpureduce::client
