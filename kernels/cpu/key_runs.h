#pragma once

// One extreme op's answers over short runs of 16-bit floats, on their bits (the short runs pass's
// answers, runs_answers.cc): MIN, MAX, their arg and NaN forms. Each element's bits become a key
// that orders as its value does (narrow_keys.h's idea in one instruction: the magnitude's bits
// flipped where the sign is set, so -0 keys just below 0; for the greatest, every bit flipped
// too, so the least key is always the one wanted); a run's keys fold to one vector by 32-lane
// minima, and 32 runs' vectors to one vector of their least keys by halving, a transpose that
// takes the minimum as it goes (32 runs of 4, 8 or 16 elements, back to back, load two to eight
// runs a vector and skip the first steps). 32 keys a 512-bit instruction, where the float64 lanes
// take 8 after two conversions. A group of 32 runs that holds a NaN goes by the float64 lanes
// (rare; the caller's `eight`), and so does the rest of the call after it. An extreme of either
// zero is the run's first zero (its own sign), as the lanes' first_of finds it. Needs AVX-512BW;
// included by runs_answers.cc only, in the passes' namespace.

#if defined(__AVX512BW__)
#include <immintrin.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "common/reduction/dtype.h"
#include "common/reduction/op.h"
#include "kernels/cpu/run_lanes.h"

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {

inline constexpr size_t kKeyGroup = 32;  // runs folded together: a vector's 16-bit lanes

// The keys of 32 elements' bits: ordered as their values (kLeast) or against them (every bit
// flipped: the least key is the greatest value). bits ^ (sign & 0x7fff), negated or not, in one
// ternary-logic instruction (A ^ (B & C): 0x78; its complement 0x87).
template <bool kLeast>
__attribute__((always_inline)) inline __m512i KeysOf(__m512i bits) {
  const __m512i sign = _mm512_srai_epi16(bits, 15);
  return _mm512_ternarylogic_epi32(bits, sign, _mm512_set1_epi16(0x7fff), kLeast ? 0x78 : 0x87);
}

// The bits a key stands for (KeysOf's inverse).
template <bool kLeast>
__attribute__((always_inline)) inline __m512i BitsOf(__m512i keys) {
  return KeysOf<true>(kLeast ? keys : _mm512_ternarylogic_epi32(keys, keys, keys, 0x55));
}

// Above every key of a number: the lanes past a run's end.
inline constexpr int16_t kNeutralKey = 0x7fff;

// A run of `length` (1 or more) elements folded to one vector of its least keys, lane by lane;
// `greatest` takes its greatest key (a NaN of one sign keys above every number, of the other
// below: the least shows that one).
template <bool kLeast>
__attribute__((always_inline)) inline __m512i FoldRun(const uint16_t* x, size_t length,
                                                      __m512i& greatest) {
  __m512i least = _mm512_set1_epi16(kNeutralKey);
  size_t k = 0;
  for (; k + kKeyGroup <= length; k += kKeyGroup) {
    const __m512i keys = KeysOf<kLeast>(_mm512_loadu_si512(x + k));
    least = _mm512_min_epi16(least, keys);
    greatest = _mm512_max_epi16(greatest, keys);
  }
  if (k < length) {  // a masked load reads nothing past the run's end
    const auto take = static_cast<__mmask32>((uint64_t{1} << (length - k)) - 1);
    const __m512i keys = KeysOf<kLeast>(_mm512_maskz_loadu_epi16(take, x + k));
    least = _mm512_mask_min_epi16(least, take, least, keys);
    greatest = _mm512_mask_max_epi16(greatest, take, greatest, keys);
  }
  return least;
}

typedef int64_t Words64 __attribute__((vector_size(64)));
typedef int32_t Words32 __attribute__((vector_size(64)));
typedef int16_t Words16 __attribute__((vector_size(64)));

// The lane-wise minimum of two vectors' halves, `lo` and `hi` picking them (GCC's shuffles, not
// the intrinsics: GCC 12 warns that theirs' undefined source "may be used uninitialized").
template <typename Words>
__attribute__((always_inline)) inline __m512i MinOf(Words lo, Words hi) {
  return _mm512_min_epi16(reinterpret_cast<__m512i>(lo), reinterpret_cast<__m512i>(hi));
}

// 32 runs' vectors of keys, each run in kLanes lanes (32: v[r] run r's; fewer: 32 / kLanes runs a
// vector, side by side as they lie in memory; v clobbered) to one vector of their least keys, a
// lane a run in the order RunOrder undoes: each step pairs two vectors, each run's lanes halved,
// the two halves' minimum kept (128-bit quarters, then halves of quarters, of 64-bit and 32-bit
// words).
template <size_t kLanes>
inline __m512i FoldGroup(__m512i* v) {
  static_assert(kLanes == 32 || kLanes == 16 || kLanes == 8 || kLanes == 4);
  if constexpr (kLanes >= 32) {
    for (size_t i = 0; i < 16; ++i) {  // to 16 lanes a run
      const auto a = reinterpret_cast<Words64>(v[2 * i]);
      const auto b = reinterpret_cast<Words64>(v[2 * i + 1]);
      v[i] = MinOf(__builtin_shufflevector(a, b, 0, 1, 2, 3, 8, 9, 10, 11),
                   __builtin_shufflevector(a, b, 4, 5, 6, 7, 12, 13, 14, 15));
    }
  }
  if constexpr (kLanes >= 16) {
    for (size_t i = 0; i < 8; ++i) {  // to 8: a quarter each
      const auto a = reinterpret_cast<Words64>(v[2 * i]);
      const auto b = reinterpret_cast<Words64>(v[2 * i + 1]);
      v[i] = MinOf(__builtin_shufflevector(a, b, 0, 1, 4, 5, 8, 9, 12, 13),
                   __builtin_shufflevector(a, b, 2, 3, 6, 7, 10, 11, 14, 15));
    }
  }
  if constexpr (kLanes >= 8) {
    for (size_t i = 0; i < 4; ++i) {  // to 4: a 64-bit word each
      const auto a = reinterpret_cast<Words64>(v[2 * i]);
      const auto b = reinterpret_cast<Words64>(v[2 * i + 1]);
      v[i] = MinOf(__builtin_shufflevector(a, b, 0, 8, 2, 10, 4, 12, 6, 14),
                   __builtin_shufflevector(a, b, 1, 9, 3, 11, 5, 13, 7, 15));
    }
  }
  for (size_t i = 0; i < 2; ++i) {  // to 2: a 32-bit word each
    const auto a = reinterpret_cast<Words32>(v[2 * i]), b = reinterpret_cast<Words32>(v[2 * i + 1]);
    v[i] = MinOf(
        __builtin_shufflevector(a, b, 0, 2, 16, 18, 4, 6, 20, 22, 8, 10, 24, 26, 12, 14, 28, 30),
        __builtin_shufflevector(a, b, 1, 3, 17, 19, 5, 7, 21, 23, 9, 11, 25, 27, 13, 15, 29, 31));
  }
  // to 1: the two vectors' low halves of each 32-bit word side by side, and the high halves
  const auto a = reinterpret_cast<Words16>(v[0]), b = reinterpret_cast<Words16>(v[1]);
  return MinOf(
      __builtin_shufflevector(a, b, 0, 32, 2, 34, 4, 36, 6, 38, 8, 40, 10, 42, 12, 44, 14, 46, 16,
                              48, 18, 50, 20, 52, 22, 54, 24, 56, 26, 58, 28, 60, 30, 62),
      __builtin_shufflevector(a, b, 1, 33, 3, 35, 5, 37, 7, 39, 9, 41, 11, 43, 13, 45, 15, 47, 17,
                              49, 19, 51, 21, 53, 23, 55, 25, 57, 27, 59, 29, 61, 31, 63));
}

// FoldGroup<kLanes>'s lanes back in run order: the index of the lane that holds run r, found once
// by folding vectors whose lanes each hold their run's number.
template <size_t kLanes>
inline __m512i RunOrder() {
  static const std::array<int16_t, kKeyGroup> order = [] {
    __m512i v[kLanes];
    alignas(64) int16_t lanes[kKeyGroup];
    for (size_t i = 0; i < kLanes; ++i) {
      for (size_t lane = 0; lane < kKeyGroup; ++lane) {
        lanes[lane] = static_cast<int16_t>(i * (kKeyGroup / kLanes) + lane / kLanes);
      }
      v[i] = _mm512_load_si512(lanes);
    }
    _mm512_store_si512(lanes, FoldGroup<kLanes>(v));
    std::array<int16_t, kKeyGroup> index{};
    for (size_t lane = 0; lane < kKeyGroup; ++lane) index[lanes[lane]] = static_cast<int16_t>(lane);
    return index;
  }();
  return _mm512_loadu_si512(order.data());
}

// Whether the 32 runs from bounds are each `length` elements long.
inline bool Uniform(const uint64_t* bounds, uint64_t length) {
  const __m512i want = _mm512_set1_epi64(static_cast<int64_t>(length));
  __mmask8 all = 0xff;
  for (size_t k = 0; k < kKeyGroup; k += 8) {
    const __m512i lengths =
        _mm512_sub_epi64(_mm512_loadu_si512(bounds + k + 1), _mm512_loadu_si512(bounds + k));
    all &= _mm512_cmpeq_epi64_mask(lengths, want);
  }
  return all == 0xff;
}

// 32 runs of kLength elements each, back to back from x (rows, segments of one length), their
// least keys in run order: kLength vectors loaded whole, 32 / kLength runs each, no masks and no
// lanes to fill (rows of 16: half the loads and the first step saved).
template <bool kLeast, size_t kLength>
__attribute__((always_inline)) inline __m512i FoldUniform(const uint16_t* x, __m512i& greatest) {
  __m512i v[kLength];
  for (size_t i = 0; i < kLength; ++i) {
    __builtin_prefetch(x + i * kKeyGroup + kRunsAhead / sizeof(uint16_t), 0,
                       2);  // as PrefetchAhead
    v[i] = KeysOf<kLeast>(_mm512_loadu_si512(x + i * kKeyGroup));
    greatest = _mm512_max_epi16(greatest, v[i]);
  }
  return _mm512_permutexvar_epi16(RunOrder<kLength>(), FoldGroup<kLength>(v));
}

// The first element of a run whose key is `key`, or (`zero`) that is either zero.
template <bool kLeast>
inline int64_t FirstKeyAt(const uint16_t* x, size_t length, int16_t key, bool zero) {
  const __m512i target = _mm512_set1_epi16(key);
  const __m512i magnitude = _mm512_set1_epi16(0x7fff);
  for (size_t k = 0; k < length; k += kKeyGroup) {
    const size_t rest = length - k < kKeyGroup ? length - k : kKeyGroup;
    const auto take = static_cast<__mmask32>((uint64_t{1} << rest) - 1);
    const __m512i bits = _mm512_maskz_loadu_epi16(take, x + k);
    const __mmask32 hits = zero ? _mm512_mask_testn_epi16_mask(take, bits, magnitude)
                                : _mm512_mask_cmpeq_epi16_mask(take, KeysOf<kLeast>(bits), target);
    if (hits != 0) return static_cast<int64_t>(k + static_cast<size_t>(__builtin_ctz(hits)));
  }
  return 0;  // not reached: the key is one of the run's
}

// `runs` runs of 16-bit floats (run r from x + bounds[r] - base, kShortestRun to kLongestRun
// elements) answered for `op` (MIN, MAX, ARGMIN, ARGMAX or a NaN form of one) at out, out + size,
// ...: 32 at a time by their keys; a group that holds a NaN, and the call's runs after it, by
// `eight(first_run, runs)` (the float64 lanes, which answer eight at a time and say how many).
// Returns how many runs from the first it answered.
template <DType kDType, bool kLeast, bool kIndex, typename Eight>
size_t AnswerKeyRuns(const uint16_t* x, const uint64_t* bounds, uint64_t base, size_t runs,
                     std::byte* out, Eight&& eight) {
  constexpr int16_t kInfinity = kInfinityBits<kDType>;
  const __m512i above_numbers = _mm512_set1_epi16(kInfinity);
  const __m512i below_numbers = _mm512_set1_epi16(static_cast<int16_t>(-kInfinity - 1));
  const __m512i order = RunOrder<kKeyGroup>();
  for (size_t r = 0; r < runs; r += kKeyGroup) {
    const size_t n = runs - r < kKeyGroup ? runs - r : kKeyGroup;
    __m512i greatest = _mm512_set1_epi16(INT16_MIN);
    __m512i least;
    const uint64_t length = bounds[r + 1] - bounds[r];
    const bool uniform = n == kKeyGroup && (length == 4 || length == 8 || length == 16) &&
                         Uniform(bounds + r, length);
    if (uniform) {
      const uint16_t* first = x + (bounds[r] - base);
      least = length == 4   ? FoldUniform<kLeast, 4>(first, greatest)
              : length == 8 ? FoldUniform<kLeast, 8>(first, greatest)
                            : FoldUniform<kLeast, 16>(first, greatest);
    } else {
      __m512i v[kKeyGroup];
      for (size_t i = 0; i < n; ++i) {
        const uint16_t* run = x + (bounds[r + i] - base);
        const uint64_t run_length = bounds[r + i + 1] - bounds[r + i];
        PrefetchAhead(run, run_length);  // as the float64 lanes do (run_lanes.h)
        v[i] = FoldRun<kLeast>(run, run_length, greatest);
      }
      for (size_t i = n; i < kKeyGroup; ++i) v[i] = _mm512_set1_epi16(kNeutralKey);
      least = _mm512_permutexvar_epi16(order, FoldGroup<kKeyGroup>(v));
    }
    const auto real = static_cast<__mmask32>((uint64_t{1} << n) - 1);
    if (_mm512_cmpgt_epi16_mask(greatest, above_numbers) != 0 ||
        _mm512_mask_cmplt_epi16_mask(real, least, below_numbers) != 0) {
      return r + eight(r, runs - r);  // a NaN: the float64 lanes from here on
    }
    // An extreme of either zero (key -1 or 0) is the run's first zero, whichever sign it has.
    const __mmask32 zero = _mm512_mask_cmple_epu16_mask(
        real, _mm512_add_epi16(least, _mm512_set1_epi16(1)), _mm512_set1_epi16(1));
    alignas(64) int16_t keys[kKeyGroup];
    if constexpr (kIndex) {
      _mm512_store_si512(keys, least);
      for (size_t i = 0; i < n; ++i) {
        const int64_t index =
            FirstKeyAt<kLeast>(x + (bounds[r + i] - base), bounds[r + i + 1] - bounds[r + i],
                               keys[i], ((zero >> i) & 1) != 0);
        std::memcpy(out + (r + i) * sizeof(index), &index, sizeof(index));
      }
    } else {
      __m512i bits = BitsOf<kLeast>(least);
      if (zero != 0) {
        _mm512_store_si512(keys, bits);
        for (size_t i = 0; i < n; ++i) {
          if (((zero >> i) & 1) == 0) continue;
          const uint16_t* run = x + (bounds[r + i] - base);
          keys[i] = static_cast<int16_t>(
              run[FirstKeyAt<kLeast>(run, bounds[r + i + 1] - bounds[r + i], 0, true)]);
        }
        bits = _mm512_load_si512(keys);
      }
      _mm512_mask_storeu_epi16(out + r * sizeof(uint16_t), real, bits);
    }
  }
  return runs;
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES

#endif  // __AVX512BW__
