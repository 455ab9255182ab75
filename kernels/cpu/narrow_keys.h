#pragma once

// float16 and bfloat16 ordered on their bits (the extremes pass and the fused sums pass): a
// sign-magnitude element's key, its magnitude negated where the sign is set, orders as its value
// does (both zeros key 0, so ties fall as the float compares'), and a NaN's key lies beyond the
// infinities'. Keys compare 32 elements in one 512-bit instruction (16 at 256 bits, the extremes
// pass's width), where their float32 values compared 8 after a conversion each. Included by the
// passes only, in their namespace.

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__AVX__)
#include <immintrin.h>
#endif

#include "common/reduction/dtype.h"
#include "kernels/cpu/block_reduce.h"
#include "kernels/cpu/element_load.h"

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {

// A run of 16-bit elements whose keys are compared before any is scanned, in vectors of the
// instruction set's width (GCC 12 compares wider ones lane by lane).
inline constexpr size_t kKeyRun = 32;
#if defined(__AVX512BW__)
inline constexpr size_t kKeyBytes = 64;
#elif defined(__AVX2__)
inline constexpr size_t kKeyBytes = 32;
#else
inline constexpr size_t kKeyBytes = 16;
#endif
inline constexpr size_t kKeyLanes = kKeyBytes / sizeof(int16_t);
static_assert(kKeyRun % kKeyLanes == 0);
typedef int16_t Keys __attribute__((vector_size(kKeyBytes)));
typedef decltype(Keys{} < 1) KeyMask;

inline int16_t ValueKey(uint16_t bits) {
  const auto magnitude = static_cast<int16_t>(bits & 0x7fff);
  return (bits & 0x8000) != 0 ? static_cast<int16_t>(-magnitude) : magnitude;
}

// kKeyLanes elements' bits and keys (the same steps on every lane: they vectorize).
__attribute__((always_inline)) inline void LoadKeys(const uint16_t* data, Keys& bits, Keys& keys) {
  std::memcpy(&bits, data, sizeof(Keys));
  const Keys sign = bits >> 15;  // -1 where the sign is set
  keys = ((bits & 0x7fff) ^ sign) - sign;
}

// The extremes so far as keys, with their first indices; the NaNs scans met, and the first's
// index (kNoNan: none).
inline constexpr size_t kNoNan = ~size_t{0};
struct KeyExtremes {
  int16_t least = 0, most = 0;
  size_t least_at = 0, most_at = 0;
  uint64_t nans = 0;
  size_t first_nan = kNoNan;
  Keys least_keys{}, most_keys{};  // the bounds a run is compared with
};

// Extremes that start at element `at` (not NaN); an extreme not wanted starts at its infinity's
// key, which no number beats, so a run passes for a NaN of either sign or a wanted new extreme.
template <DType kDType>
KeyExtremes StartKeys(const uint16_t* data, size_t at, bool min, bool max) {
  KeyExtremes extremes;
  const int16_t key = ValueKey(data[at]);
  extremes.least = min ? key : static_cast<int16_t>(-kInfinityBits<kDType>);
  extremes.most = max ? key : kInfinityBits<kDType>;
  extremes.least_at = extremes.most_at = at;
  extremes.least_keys = Keys{} + extremes.least;
  extremes.most_keys = Keys{} + extremes.most;
  return extremes;
}

// Whether the run of kKeyRun elements at data holds a key beyond the bounds (a new extreme or a
// NaN).
__attribute__((always_inline)) inline bool RunPasses(const uint16_t* data,
                                                     const KeyExtremes& extremes) {
#if defined(__AVX512BW__)
  // The compares' masks tested as they are (GCC's vector compare makes them a vector first).
  static_assert(kKeyRun == kKeyLanes);
  Keys bits, keys;
  LoadKeys(data, bits, keys);
  const auto lanes = reinterpret_cast<__m512i>(keys);
  return (_mm512_cmplt_epi16_mask(lanes, reinterpret_cast<__m512i>(extremes.least_keys)) |
          _mm512_cmpgt_epi16_mask(lanes, reinterpret_cast<__m512i>(extremes.most_keys))) != 0;
#else
  KeyMask passes{};
  for (size_t v = 0; v < kKeyRun / kKeyLanes; ++v) {
    Keys bits, keys;
    LoadKeys(data + v * kKeyLanes, bits, keys);
    passes |= (keys < extremes.least_keys) | (keys > extremes.most_keys);
  }
  return AnyLane(passes);
#endif
}

// Elements [from, to) in index order, strict compares (ties keep the first occurrence), NaN
// counted and skipped; the bounds renewed.
template <DType kDType>
void ScanKeys(const uint16_t* data, size_t from, size_t to, KeyExtremes& extremes) {
  for (size_t k = from; k < to; ++k) {
    if ((data[k] & 0x7fff) > kInfinityBits<kDType>) {
      if (extremes.nans++ == 0) extremes.first_nan = k;
      continue;
    }
    const int16_t key = ValueKey(data[k]);
    if (key < extremes.least) {
      extremes.least = key;
      extremes.least_at = k;
    }
    if (key > extremes.most) {
      extremes.most = key;
      extremes.most_at = k;
    }
  }
  extremes.least_keys = Keys{} + extremes.least;
  extremes.most_keys = Keys{} + extremes.most;
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES
