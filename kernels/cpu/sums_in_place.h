#pragma once

// Sums alone (SUM, MEAN and their NaN forms) of a short run of float elements, added where they
// lie, element by element in order, as the columns pass adds a transposed column (bfloat16
// widened to float32 exactly, then added as float64): the same Stats, bit for bit, without the
// transposed copy (rows_reduce.cc, segmented_reduce.cc). Since the short runs pass (issue 23's
// fifth session) takes float runs of 4 to 128 elements (float64 up to 64), only runs of 1 to 3
// elements come here; the measurements below are from before it.

#include <cstdint>
#include <type_traits>

#include "common/reduction/stats.h"
#include "kernels/cpu/element_load.h"

namespace gpureduce::kernels::cpu {

// Whether a run of `length` elements of `request` is summed here: sums alone of float32 runs up
// to 128, bfloat16 ones up to 64, float64 ones shorter than 64. Measured against the columns
// pass on one thread of the dev VM (rows, 64 MiB, interleaved rounds; the same bits by
// sums_in_place_test):
// float32 1.9x at 16, 1.6x at 32, 1.4x at 64, 1.1x at 128; float64 1.65x at 16, 1.2-1.4x at
// 24-48, but 0.9x at 64 and 128, where the pass keeps the sums in registers; bfloat16 1.5x at
// 16, 1.35x at 32, 1.25x at 64, 1.0x at 128. Not float16: widened one at a time here (the pass
// has F16C), 1.0x at 16 and 0.45-0.8x from 32.
inline bool SumsInPlace(DType dtype, const StatsNeeds& n, uint64_t length) {
  if (!n.sum || n.sum_squares || n.prod || n.min || n.max || n.moments) return false;
  switch (dtype) {
    case DType::kFloat32:
      return length <= 128;
    case DType::kBFloat16:
      return length <= 64;
    case DType::kFloat64:
      return length < 64;
    default:
      return false;
  }
}

template <DType kDType>
using SumsElement = GPUREDUCE_CPU_PASSES::Element<kDType>;
template <DType kDType>
using SumsStorage = typename SumsElement<kDType>::Storage;

// Calls f(std::integral_constant<DType, d>{}) for the float dtype `dtype` that SumsInPlace takes.
template <typename F>
decltype(auto) VisitSumsDType(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kBFloat16:
      return f(std::integral_constant<DType, DType::kBFloat16>{});
    case DType::kFloat64:
      return f(std::integral_constant<DType, DType::kFloat64>{});
    default:
      return f(std::integral_constant<DType, DType::kFloat32>{});
  }
}

// One element into a run's sum (a NaN counted and left out).
template <DType kDType>
inline void AddToSums(SumsStorage<kDType> x, double& sum, uint32_t& nans) {
  const auto v = SumsElement<kDType>::Load(x);
  const bool nan = v != v;
  nans += static_cast<uint32_t>(nan);
  sum += static_cast<double>(nan ? decltype(v){} : v);
}

// x[0..length)'s Stats from its sum (NaN left out) and NaN count, as the columns pass makes a
// fresh column's.
template <DType kDType>
Stats SumsStats(const SumsStorage<kDType>* x, uint64_t length, double sum, uint32_t nans) {
  Stats block;
  block.integer = false;
  block.count = length;
  block.nan_count = nans;
  block.first_nan = -1;
  for (uint64_t e = 0; nans != 0 && e < length; ++e) {
    const auto v = SumsElement<kDType>::Load(x[e]);
    if (v != v) {
      block.first_nan = static_cast<int64_t>(e);
      break;
    }
  }
  block.sum = sum;
  block.sum_squares = 0;
  return block;
}

// x[0..length) added in order.
template <DType kDType>
Stats SumsOf(const SumsStorage<kDType>* x, uint64_t length) {
  double sum = 0;
  uint32_t nans = 0;
  for (uint64_t e = 0; e < length; ++e) AddToSums<kDType>(x[e], sum, nans);
  return SumsStats<kDType>(x, length, sum, nans);
}

}  // namespace gpureduce::kernels::cpu
