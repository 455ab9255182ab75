// The extremes pass (block_reduce.h): the smallest and largest non-NaN element and the first
// index of each, in one loop.
//
// Most runs of kRun elements hold nothing that beats the extreme so far, and their own extreme
// (a branch-free select that skips NaN, so finding it vectorizes) beats it exactly when one of
// them does: only runs that pass are scanned element by element, in index order, with a strict
// compare, so ties keep the first occurrence. On the dev machine (one core, 64Ki floats) that
// read 8.7-9.0 GB/s against 5.9-6.0 GB/s for an element-by-element scan.

#include <cstddef>
#include <cstdint>
#include <limits>

#include "kernels/cpu/block_reduce.h"
#include "kernels/cpu/element_load.h"

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {
namespace {

constexpr size_t kRun = kLanes;

template <DType kDType, bool kMin, bool kMax>
void Extremes(const typename Element<kDType>::Storage* data, size_t size, uint64_t base_index,
              Stats& stats) {
  using E = Element<kDType>;
  using V = typename E::Value;
  // Past the leading NaNs: the first non-NaN element starts both extremes.
  size_t start = 0;
  while (start < size && !(E::Load(data[start]) == E::Load(data[start]))) ++start;
  if (start == size) return;  // all NaN: no extreme
  V lo = E::Load(data[start]), hi = lo;
  size_t lo_at = start, hi_at = start;
  const auto scan = [&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) {
      const V x = E::Load(data[i]);
      if (kMin && x < lo) {
        lo = x;
        lo_at = i;
      }
      if (kMax && x > hi) {
        hi = x;
        hi_at = i;
      }
    }
  };
  // A select whose false arm is the running value skips NaN (every compare with it is false).
  constexpr V kHighest = std::numeric_limits<V>::has_infinity ? std::numeric_limits<V>::infinity()
                                                              : std::numeric_limits<V>::max();
  constexpr V kLowest = std::numeric_limits<V>::has_infinity ? -std::numeric_limits<V>::infinity()
                                                             : std::numeric_limits<V>::lowest();
  size_t i = start + 1;
  for (; i + kRun <= size; i += kRun) {
    V run_lo = kHighest, run_hi = kLowest;
    for (size_t k = 0; k < kRun; ++k) {
      const V x = E::Load(data[i + k]);
      if constexpr (kMin) run_lo = x < run_lo ? x : run_lo;
      if constexpr (kMax) run_hi = x > run_hi ? x : run_hi;
    }
    if ((kMin && run_lo < lo) || (kMax && run_hi > hi)) scan(i, i + kRun);
  }
  scan(i, size);

  if constexpr (kMin) {
    stats.min = static_cast<double>(lo);
    if constexpr (IsInteger(kDType)) stats.int_min = lo;
    stats.min_index = static_cast<int64_t>(base_index + lo_at);
  }
  if constexpr (kMax) {
    stats.max = static_cast<double>(hi);
    if constexpr (IsInteger(kDType)) stats.int_max = hi;
    stats.max_index = static_cast<int64_t>(base_index + hi_at);
  }
}

template <DType kDType, bool kMin, bool kMax>
void RunExtremes(const std::byte* data, size_t size, uint64_t base_index, Stats& stats) {
  Extremes<kDType, kMin, kMax>(reinterpret_cast<const typename Element<kDType>::Storage*>(data),
                               size, base_index, stats);
}

}  // namespace

void AddExtremes(DType dtype, bool min, bool max, const std::byte* data, size_t size,
                 uint64_t base_index, Stats& stats) {
  if (!min && !max) return;
  DispatchPassDType(dtype, [&]<DType kDType>() {
    if (min && max) return RunExtremes<kDType, true, true>(data, size, base_index, stats);
    if (min) return RunExtremes<kDType, true, false>(data, size, base_index, stats);
    return RunExtremes<kDType, false, true>(data, size, base_index, stats);
  });
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES
