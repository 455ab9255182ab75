// The extremes pass (block_reduce.h): the smallest and largest non-NaN element and the first
// index of each, in one loop.
//
// Most runs of kRun elements hold nothing that beats the extremes so far; whether one does is a
// few vector compares. Only runs that pass are scanned element by element, in index order, with
// a strict compare, so ties keep the first occurrence. On the dev machine (one core, 64Ki
// float32 in L2, AVX2) a MIN request read 13 GB/s with the former per-run select over runs
// of 8, and 20 GB/s so (most of it now the NaN count of the sums pass).

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "kernels/cpu/block_reduce.h"
#include "kernels/cpu/element_load.h"
#include "kernels/cpu/narrow_keys.h"

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {
namespace {

// Elements per run: long enough that the test of a run costs little per element, short enough
// that a run that passes is cheap to scan (on random data few do: the extremes settle early).
constexpr size_t kRun = 32;
#if defined(__AVX2__)
constexpr size_t kVectorBytes = 32;
#else
constexpr size_t kVectorBytes = 16;
#endif

template <DType kDType, bool kMin, bool kMax>
void Extremes(const typename Element<kDType>::Storage* data, size_t size, uint64_t base_index,
              Stats& stats) {
  using E = Element<kDType>;
  using V = typename E::Value;
  // The pass counts a float block's NaNs too (NaN-free in a compare per vector), so a request
  // of extremes alone needs no sums pass. Past the leading NaNs, the first non-NaN element
  // starts both extremes.
  constexpr bool kFloat = !IsInteger(kDType);
  size_t start = 0;
  while (start < size && !(E::Load(data[start]) == E::Load(data[start]))) ++start;
  uint64_t nans = start;
  if (start == size) {  // all NaN: no extreme
    if constexpr (kFloat) stats.nan_count = nans;
    return;
  }
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
  // Runs of kRun elements compared with the extremes so far in vectors of the instruction set's
  // width (a compare with NaN is false, so NaN never passes).
  constexpr size_t kBytes = kVectorBytes;
  typedef V Vector __attribute__((vector_size(kBytes)));
  constexpr size_t kWidth = kBytes / sizeof(V);
  static_assert(kRun % kWidth == 0);
  size_t i = start + 1;
  Vector x;
  decltype(x < x) nan_lanes{};  // -1 a NaN, per lane
  // The extremes as vectors, renewed only when a scan moves them: built lane by lane for every
  // run, they cost the int32 five-op request (whose extremes pass is apart) about half its time.
  Vector lo_vector = Vector{} + lo, hi_vector = Vector{} + hi;
  for (; i + kRun <= size; i += kRun) {
    decltype(x < x) passes{};
    for (size_t v = 0; v < kRun / kWidth; ++v) {
      std::memcpy(&x, data + i + v * kWidth, kBytes);  // 16-bit floats: NarrowExtremes
      if constexpr (kFloat) nan_lanes += x != x;
      if constexpr (kMin) passes |= x < lo_vector;
      if constexpr (kMax) passes |= x > hi_vector;
    }
    if (AnyLane(passes)) {
      scan(i, i + kRun);
      lo_vector = Vector{} + lo;
      hi_vector = Vector{} + hi;
    }
  }
  scan(i, size);
  if constexpr (kFloat) {
    for (size_t k = 0; k < kWidth; ++k) nans -= static_cast<int64_t>(nan_lanes[k]);
    for (; i < size; ++i) nans += !(E::Load(data[i]) == E::Load(data[i]));
    stats.nan_count = nans;
  }

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

// float16 and bfloat16 compared on their keys (narrow_keys.h), a run in one vector. Every run
// holding a NaN passes; such a run counts its NaNs and is scanned only if a number in it beats
// the extremes, so NaN-heavy data stays on vectors. The first NaN is noted on the way (a second
// look from the block's start cost a MIN request of float16 with a NaN in 100,000 elements half
// its time).
template <DType kDType, bool kMin, bool kMax>
void NarrowExtremes(const uint16_t* data, size_t size, uint64_t base_index, Stats& stats) {
  using E = Element<kDType>;
  constexpr int16_t kInfinity = kInfinityBits<kDType>;
  size_t start = 0;
  while (start < size && (data[start] & 0x7fff) > kInfinity) ++start;
  if (start == size) {  // all NaN: no extreme
    stats.nan_count = size;
    return;
  }
  KeyExtremes extremes = StartKeys<kDType>(data, start, kMin, kMax);
  extremes.nans = start;
  if (start > 0) extremes.first_nan = 0;
  size_t i = start + 1;
  for (; i + kKeyRun <= size; i += kKeyRun) {
    if (!RunPasses(data + i, extremes)) continue;
    KeyMask nan[kKeyRun / kKeyLanes], beats{}, any_nan{};
    for (size_t v = 0; v < kKeyRun / kKeyLanes; ++v) {
      Keys bits, keys;
      LoadKeys(data + i + v * kKeyLanes, bits, keys);
      nan[v] = (bits & 0x7fff) > kInfinity;
      any_nan |= nan[v];
      beats |= ((keys < extremes.least_keys) | (keys > extremes.most_keys)) & ~nan[v];
    }
    if (AnyLane(beats)) {
      ScanKeys<kDType>(data, i, i + kKeyRun, extremes);  // counts the run's NaNs too
    } else if (AnyLane(any_nan)) {
      for (size_t k = 0; k < kKeyRun; ++k) {
        if (nan[k / kKeyLanes][k % kKeyLanes] == 0) continue;
        if (extremes.nans++ == 0) extremes.first_nan = i + k;
      }
    }
  }
  ScanKeys<kDType>(data, i, size, extremes);
  stats.nan_count = extremes.nans;
  // The first NaN as the runs met it (ReducePasses would look for it again).
  if (extremes.nans > 0) stats.first_nan = static_cast<int64_t>(base_index + extremes.first_nan);
  if constexpr (kMin) {
    stats.min = E::Load(data[extremes.least_at]);
    stats.min_index = static_cast<int64_t>(base_index + extremes.least_at);
  }
  if constexpr (kMax) {
    stats.max = E::Load(data[extremes.most_at]);
    stats.max_index = static_cast<int64_t>(base_index + extremes.most_at);
  }
}

template <DType kDType, bool kMin, bool kMax>
void RunExtremes(const std::byte* data, size_t size, uint64_t base_index, Stats& stats) {
  if constexpr (kDType == DType::kFloat16 || kDType == DType::kBFloat16) {
    NarrowExtremes<kDType, kMin, kMax>(reinterpret_cast<const uint16_t*>(data), size, base_index,
                                       stats);
  } else {
    Extremes<kDType, kMin, kMax>(reinterpret_cast<const typename Element<kDType>::Storage*>(data),
                                 size, base_index, stats);
  }
}

}  // namespace

void AddExtremes(DType dtype, bool min, bool max, const std::byte* data, size_t size,
                 uint64_t base_index, Stats& stats) {
  if (!min && !max) return;
  DispatchLoadDType(dtype, [&]<DType kDType>() {
    if (min && max) return RunExtremes<kDType, true, true>(data, size, base_index, stats);
    if (min) return RunExtremes<kDType, true, false>(data, size, base_index, stats);
    return RunExtremes<kDType, false, true>(data, size, base_index, stats);
  });
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES
