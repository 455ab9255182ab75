#pragma once

// Latencies in HdrHistogram's log-linear buckets: values below 256 ns get a bucket each, and every
// power of two above is split into 128 equal steps, so a recorded value is known to within 0.8%
// whatever its magnitude, in fixed memory, and the histograms of several threads merge exactly.
// Percentiles come from the bucket counts, not from a sorted vector of every sample.

#include <array>
#include <cstdint>

namespace gpureduce::client {

class LatencyHistogram {
 public:
  static constexpr int kSubBucketBits = 8;
  static constexpr uint64_t kSubBuckets = uint64_t{1} << kSubBucketBits;
  // Values of 2^kMaxBits ns (about 78 hours at 48) and more land in the last bucket.
  static constexpr int kMaxBits = 48;

  void Record(uint64_t nanoseconds);
  void Merge(const LatencyHistogram& other);

  uint64_t count() const { return count_; }
  uint64_t min() const { return count_ == 0 ? 0 : min_; }
  uint64_t max() const { return max_; }
  double mean() const { return count_ == 0 ? 0 : double(sum_) / double(count_); }

  // The smallest recorded value's bucket upper edge that at least `percentile` percent of the
  // values do not exceed (0 < percentile <= 100), clamped to [min, max]; 0 when empty.
  uint64_t ValueAtPercentile(double percentile) const;

  // The bucket `value` falls in and the largest value that bucket holds (exposed for tests).
  static int BucketOf(uint64_t value);
  static uint64_t UpperEdge(int bucket);

 private:
  // Values below kSubBuckets get one bucket each; above, kSubBuckets / 2 per power of two.
  static constexpr int kBuckets =
      int(kSubBuckets) + (kMaxBits - kSubBucketBits) * int(kSubBuckets / 2);

  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
  uint64_t sum_ = 0;  // 2^64 ns: 584 years of summed latency
};

}  // namespace gpureduce::client
