#pragma once

// Sums alone (SUM, MEAN and their NaN forms) of a short run of float32 or float64 elements, added
// where they lie, element by element in order, as the columns pass adds a transposed column:
// the same Stats, bit for bit, without the transposed copy (rows_reduce.cc, segmented_reduce.cc).

#include <cstdint>

#include "common/reduction/stats.h"

namespace gpureduce::kernels::cpu {

// Whether a run of `length` elements of `request` is summed here: sums alone of float32 runs up
// to 128, float64 ones shorter than 64. Measured against the columns pass on one thread of the
// dev VM (rows, 64 MiB, 3 interleaved rounds, the same digests): float32 1.9x at 16, 1.6x at 32,
// 1.4x at 64, 1.1x at 128; float64 1.65x at 16, 1.2-1.4x at 24-48, but 0.9x at 64 and 128, where
// the pass keeps the sums in registers.
inline bool SumsInPlace(DType dtype, const StatsNeeds& n, uint64_t length) {
  if (!n.sum || n.sum_squares || n.prod || n.min || n.max || n.moments) return false;
  if (dtype == DType::kFloat32) return length <= 128;
  return dtype == DType::kFloat64 && length < 64;
}

// One element into a run's sum (a NaN counted and left out).
template <typename T>
inline void AddToSums(T v, double& sum, uint32_t& nans) {
  const bool nan = v != v;
  nans += static_cast<uint32_t>(nan);
  sum += static_cast<double>(nan ? T{} : v);
}

// x[0..length)'s Stats from its sum (NaN left out) and NaN count, as the columns pass makes a
// fresh column's.
template <typename T>
Stats SumsStats(const T* x, uint64_t length, double sum, uint32_t nans) {
  Stats block;
  block.integer = false;
  block.count = length;
  block.nan_count = nans;
  block.first_nan = -1;
  for (uint64_t e = 0; nans != 0 && e < length; ++e) {
    if (x[e] != x[e]) {
      block.first_nan = static_cast<int64_t>(e);
      break;
    }
  }
  block.sum = sum;
  block.sum_squares = 0;
  return block;
}

// x[0..length) added in order.
template <typename T>
Stats SumsOf(const T* x, uint64_t length) {
  double sum = 0;
  uint32_t nans = 0;
  for (uint64_t e = 0; e < length; ++e) AddToSums(x[e], sum, nans);
  return SumsStats(x, length, sum, nans);
}

}  // namespace gpureduce::kernels::cpu
