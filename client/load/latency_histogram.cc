#include "client/load/latency_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace gpureduce::client {

int LatencyHistogram::BucketOf(uint64_t value) {
  if (value < kSubBuckets) return int(value);
  const int magnitude = std::bit_width(value) - 1;  // value in [2^magnitude, 2^(magnitude+1))
  if (magnitude >= kMaxBits) return kBuckets - 1;
  const int shift = magnitude - (kSubBucketBits - 1);
  const int sub = int(value >> shift) - int(kSubBuckets / 2);  // 0 .. kSubBuckets/2 - 1
  return int(kSubBuckets) + (magnitude - kSubBucketBits) * int(kSubBuckets / 2) + sub;
}

uint64_t LatencyHistogram::UpperEdge(int bucket) {
  if (bucket < int(kSubBuckets)) return uint64_t(bucket);
  const int above = bucket - int(kSubBuckets);
  const int magnitude = kSubBucketBits + above / int(kSubBuckets / 2);
  const uint64_t sub = uint64_t(above % int(kSubBuckets / 2)) + kSubBuckets / 2;
  const int shift = magnitude - (kSubBucketBits - 1);
  return ((sub + 1) << shift) - 1;
}

void LatencyHistogram::Record(uint64_t nanoseconds) {
  ++counts_[BucketOf(nanoseconds)];
  ++count_;
  min_ = std::min(min_, nanoseconds);
  max_ = std::max(max_, nanoseconds);
  sum_ += nanoseconds;
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (int i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  sum_ += other.sum_;
}

uint64_t LatencyHistogram::ValueAtPercentile(double percentile) const {
  if (count_ == 0) return 0;
  const double wanted = std::clamp(percentile, 0.0, 100.0) / 100.0 * double(count_);
  const uint64_t rank = std::max<uint64_t>(1, uint64_t(std::ceil(wanted)));
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::clamp(UpperEdge(i), min(), max_);
  }
  return max_;
}

}  // namespace gpureduce::client
