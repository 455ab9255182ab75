#pragma once

// A short run's groups in the sums pass's kLanes float64 lanes (the short runs pass,
// runs_pass.cc): element e of a run in lane e % kLanes, each group's lanes added to the run's,
// and the searches the run's extremes take over its groups afterwards. Included by the passes
// only, in their namespace, so each instruction set's copy keeps its own.

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/cpu/block_reduce.h"
#include "kernels/cpu/element_load.h"
#include "kernels/cpu/sum_lanes.h"

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {

inline constexpr size_t kMaxGroups = kLongestRun / kLanes;
static_assert(kLongestRun % kLanes == 0);

// A run's group of kLanes elements as float64 lanes.
struct Group {
  Lanes v[kVectors];
};

// What a run's groups leave in the lanes, before the lanes are combined.
struct RunLanes {
  Lanes sum[kVectors] = {};
  Lanes sum_lo[kVectors] = {};  // float64: each lane's additions' rounding errors (TwoSum)
  Lanes squares[kVectors] = {};
  Mask int_sum[kVectors] = {};  // int32: exact, in int64 lanes; int64: its high halves (AddExactly)
  Mask int_low[kVectors] = {};  // int64: its elements' unsigned low halves
  Mask nans[kVectors] = {};     // the padding's too (a run's last group)
  Lanes least[kVectors];
  Lanes most[kVectors];
  Mask int_least[kVectors];  // int64's extremes, exact (float64 lanes round past 2^53)
  Mask int_most[kVectors];
};

// The rounding error of sum = a + b, exactly (Knuth's TwoSum, no branch; -ffp-contract=off keeps
// it from being fused): a + b == sum + error.
template <typename T>
__attribute__((always_inline)) inline T TwoSumError(const T& a, const T& b, const T& sum) {
  const T b_part = sum - a;
  return (a - (sum - b_part)) + (b - b_part);
}

// a where `take`, else b, lane by lane (bitwise: GCC lowers a vector select).
__attribute__((always_inline)) inline Lanes Blend(const Mask& take, const Lanes& a,
                                                  const Lanes& b) {
  return reinterpret_cast<Lanes>((reinterpret_cast<Mask>(a) & take) |
                                 (reinterpret_cast<Mask>(b) & ~take));
}

// A NaN's storage (an integer run's padding: 0, made NaN once widened, PadLanes).
template <DType kDType>
typename Element<kDType>::Storage NanStorage() {
  if constexpr (kDType == DType::kInt32 || kDType == DType::kInt64) {
    return 0;
  } else if constexpr (kDType == DType::kFloat16) {
    return 0x7e00;
  } else if constexpr (kDType == DType::kBFloat16) {
    return 0x7fc0;
  } else {
    return std::numeric_limits<typename Element<kDType>::Storage>::quiet_NaN();
  }
}

template <DType kDType>
__attribute__((always_inline)) inline void LoadGroup(const typename Element<kDType>::Storage* x,
                                                     Group& out) {
  Floats8 group{};
  Floats4 halves[2];
  if constexpr (sizeof(typename Element<kDType>::Storage) == 2 && kWidth == 4) {
    LoadFloatHalves<kDType>(x, halves[0], halves[1]);
  } else if constexpr (kDType != DType::kFloat64) {
    LoadFloats<kDType>(x, group);
  }
  for (size_t v = 0; v < kVectors; ++v) LoadLanes<kDType>(x, group, halves, v, out.v[v]);
}

// int64 lanes added exactly: int32's as they are; int64's as their signed high 32-bit halves into
// `sum` and unsigned low halves into `low` (as the sums pass adds them, int_sums.h: exact in
// 64 bits for 2^31 elements, where a run has at most kLongestRun).
__attribute__((always_inline)) inline void AddExactly(const Int32Lanes& x, Mask& sum, Mask&) {
  sum += ToInt64(x);
}
__attribute__((always_inline)) inline void AddExactly(const Mask& x, Mask& sum, Mask& low) {
  low += x & 0xffffffff;
  sum += x >> 32;  // arithmetic shift: the high half, signed
}

// An integer group's lanes as loaded: int32's or int64's.
template <typename Int>
using IntLanesOf = std::conditional_t<sizeof(Int) == 4, Int32Lanes, Mask>;

// An integer group: float64 lanes for all but the sum (int32's exact; int64's rounded as NumPy
// converts them for the moments), added exactly (with kSum).
template <bool kSum = true, typename Int>
__attribute__((always_inline)) inline void LoadIntGroup(const Int* x, Group& out, Mask* sum,
                                                        Mask* low) {
  for (size_t v = 0; v < kVectors; ++v) {
    IntLanesOf<Int> lanes;
    std::memcpy(&lanes, x + v * kWidth, sizeof(lanes));
    out.v[v] = ToDouble(lanes);
    if constexpr (kSum) AddExactly(lanes, sum[v], low[v]);
  }
}

// An integer group's exact sums alone.
template <typename Int>
__attribute__((always_inline)) inline void AddIntSums(const Int* x, Mask* sum, Mask* low) {
  for (size_t v = 0; v < kVectors; ++v) {
    IntLanesOf<Int> lanes;
    std::memcpy(&lanes, x + v * kWidth, sizeof(lanes));
    AddExactly(lanes, sum[v], low[v]);
  }
}

// An int64 group's lanes into its run's extremes: `rest` of them (1 to kLanes) the group's, the
// others taken as its first (which the run holds, so they change no extreme).
template <bool kMin, bool kMax>
__attribute__((always_inline)) inline void AddIntExtremes(const int64_t* x, size_t rest,
                                                          Mask* least, Mask* most) {
  for (size_t v = 0; v < kVectors; ++v) {
    Mask lanes;
    std::memcpy(&lanes, x + v * kWidth, sizeof(lanes));
    if (rest < kLanes) {
      Mask position;
      for (size_t i = 0; i < kWidth; ++i) position[i] = static_cast<int64_t>(v * kWidth + i);
      lanes = position < static_cast<int64_t>(rest) ? lanes : Mask{} + x[0];
    }
    if constexpr (kMin) least[v] = lanes < least[v] ? lanes : least[v];
    if constexpr (kMax) most[v] = lanes > most[v] ? lanes : most[v];
  }
}

// The first of a run's int64 elements equal to `target` (there is one): a group's compares at
// once (element by element, rows of 512 MIN read 0.66x what the columns pass did).
inline int64_t FirstEqualInt(const int64_t* x, size_t length, int64_t target) {
  size_t k = 0;
  for (; k + kLanes <= length; k += kLanes) {
    uint64_t bits = 0;
    for (size_t v = 0; v < kVectors; ++v) {
      Mask lanes;
      std::memcpy(&lanes, x + k + v * kWidth, sizeof(lanes));
      const Mask equal = lanes == target;
      for (size_t i = 0; i < kWidth; ++i) {
        bits |= static_cast<uint64_t>(equal[i] & 1) << (v * kWidth + i);
      }
    }
    if (bits != 0) return static_cast<int64_t>(k + static_cast<size_t>(__builtin_ctzll(bits)));
  }
  while (k + 1 < length && x[k] != target) ++k;
  return static_cast<int64_t>(k);
}

// The lanes of a group from `rest` on made NaN (an int32 run's padding, 0 in its exact sum).
__attribute__((always_inline)) inline void PadLanes(size_t rest, Group& group) {
  for (size_t v = 0; v < kVectors; ++v) {
    Mask position;
    for (size_t i = 0; i < kWidth; ++i) position[i] = static_cast<int64_t>(v * kWidth + i);
    group.v[v] = Blend(position < static_cast<int64_t>(rest), group.v[v],
                       Lanes{} + std::numeric_limits<double>::quiet_NaN());
  }
}

// A run's last `rest` (1 to kLanes - 1) elements into `padded`, NaN after them: by a masked
// load where the copy has one (a copy element by element costs about as much as the group).
template <DType kDType>
__attribute__((always_inline)) inline void LoadRest(const typename Element<kDType>::Storage* x,
                                                    size_t rest,
                                                    typename Element<kDType>::Storage* padded) {
#if defined(__AVX512F__)
  const auto take = static_cast<__mmask8>((1u << rest) - 1);
  if constexpr (kDType == DType::kFloat64) {
    _mm512_storeu_pd(padded, _mm512_mask_loadu_pd(_mm512_set1_pd(NanStorage<kDType>()), take, x));
  } else if constexpr (kDType == DType::kFloat32) {
    _mm256_storeu_ps(padded, _mm256_mask_loadu_ps(_mm256_set1_ps(NanStorage<kDType>()), take, x));
  } else if constexpr (kDType == DType::kInt32) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(padded), _mm256_maskz_loadu_epi32(take, x));
  } else if constexpr (kDType == DType::kInt64) {
    _mm512_storeu_si512(padded, _mm512_maskz_loadu_epi64(take, x));
  } else {
    const __m128i nan = _mm_set1_epi16(static_cast<int16_t>(NanStorage<kDType>()));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(padded), _mm_mask_loadu_epi16(nan, take, x));
  }
#else
  for (size_t i = 0; i < kLanes; ++i) padded[i] = i < rest ? x[i] : NanStorage<kDType>();
#endif
}

// The run's group at element `at` (of `length`) as float64 lanes, padded with NaN past its end:
// AddRunGroups' loads without its sums, for the looks that read a run again where the copy kept
// no groups (runs_answers.cc).
template <DType kDType>
__attribute__((always_inline)) inline void LoadRunGroup(const typename Element<kDType>::Storage* x,
                                                        size_t length, size_t at, Group& group) {
  constexpr bool kInteger = IsInteger(kDType);
  if (length - at >= kLanes) {
    if constexpr (kInteger) {
      LoadIntGroup<false>(x + at, group, nullptr, nullptr);
    } else {
      LoadGroup<kDType>(x + at, group);
    }
    return;
  }
  typename Element<kDType>::Storage padded[kLanes];
  LoadRest<kDType>(x + at, length - at, padded);
  if constexpr (kInteger) {
    LoadIntGroup<false>(padded, group, nullptr, nullptr);
    PadLanes(length - at, group);
  } else {
    LoadGroup<kDType>(padded, group);
  }
}

// A run's work is short and branchy, so the core reads few runs ahead: the lines kRunsAhead bytes
// on are asked for now (into L2: 1.15x at rows of 16 float32, one thread of the dev VM, against
// into L1 and 2 KiB ahead). (As integers: the address may lie past the array; a prefetch there
// is harmless.)
inline constexpr size_t kRunsAhead = 4096;
template <typename Storage>
__attribute__((always_inline)) inline void PrefetchAhead(const Storage* run, size_t length) {
  const auto from = reinterpret_cast<uintptr_t>(run);
  for (uintptr_t line = from; line < from + length * sizeof(Storage); line += 64) {
    __builtin_prefetch(reinterpret_cast<const void*>(line + kRunsAhead), 0, 2);
  }
}

// The run's groups added in lanes: sums (exact int64 ones for int32), squares, NaN counts (the
// padding's included) and the lanes' extremes (a NaN compares false); with kKeep, the groups
// kept in `g` too, for the extremes' and the moments' second looks; kGroups > 0: the run is
// that many whole groups; without kSum, no sums (an extreme's answer alone). (The lanes are
// returned, not added into an argument, so they stay in registers.) kNanFree: the run is taken
// to hold no NaN and no padding (the caller checks the sums after): no NaN masks, no counts;
// without kSum its sums are a probe that only the caller's check reads (an addition a group, where
// the masks and counts took three instructions).
template <DType kDType, bool kSquares, bool kMin, bool kMax, bool kKeep, size_t kGroups = 0,
          bool kSum = true, bool kNanFree = false>
__attribute__((always_inline)) inline RunLanes AddRunGroups(
    const typename Element<kDType>::Storage* x, size_t length, Group* g) {
  using Storage = typename Element<kDType>::Storage;
  constexpr bool kInteger = IsInteger(kDType);
  // int64's extremes go in int64 lanes (AddIntExtremes), not float64's.
  constexpr bool kIntExtremes = kDType == DType::kInt64 && (kMin || kMax);
  constexpr bool kLaneMin = kMin && !kIntExtremes, kLaneMax = kMax && !kIntExtremes;
  static_assert(kDType != DType::kInt64 || !kSquares, "int64 runs take no squares (RunsPassTakes)");
  RunLanes lanes;
  for (size_t v = 0; v < kVectors; ++v) {
    lanes.least[v] = Lanes{} + std::numeric_limits<double>::infinity();
    lanes.most[v] = Lanes{} - std::numeric_limits<double>::infinity();
    if constexpr (kIntExtremes) {
      lanes.int_least[v] = Mask{} + std::numeric_limits<int64_t>::max();
      lanes.int_most[v] = Mask{} + std::numeric_limits<int64_t>::min();
    }
  }
  if constexpr (kGroups > 0) length = kGroups * kLanes;
  const size_t groups = (length + kLanes - 1) / kLanes;
  // An integer group's own looks, from `at` (the run's, or its padded last few, `rest` of them).
  const auto add_int = [&](const Storage* at, size_t rest, Group& group, bool padded) {
    if constexpr (kInteger) {
      if constexpr (kIntExtremes)
        AddIntExtremes<kMin, kMax>(at, rest, lanes.int_least, lanes.int_most);
      if constexpr (kKeep || kLaneMin || kLaneMax || kSquares) {
        LoadIntGroup<kSum>(at, group, lanes.int_sum, lanes.int_low);
        if (padded) PadLanes(rest, group);
      } else {
        if constexpr (kSum) AddIntSums(at, lanes.int_sum, lanes.int_low);
      }
    }
  };
  if constexpr (kInteger && !kSquares && !kLaneMin && !kLaneMax && !kKeep) {
    // An integer SUM (or MEAN) alone, or int64's extremes too: the exact sums (and int64 lanes)
    // only, no float64 lanes; its NaN count is the padding's (int32 rows of 16: SUM 1.2x).
    Group unused;
    for (size_t k = 0; k < groups; ++k) {
      if ((k + 1) * kLanes <= length) {
        add_int(x + k * kLanes, kLanes, unused, false);
      } else {
        Storage padded[kLanes];
        LoadRest<kDType>(x + k * kLanes, length - k * kLanes, padded);
        add_int(padded, length - k * kLanes, unused, true);
        lanes.nans[0][0] += static_cast<int64_t>(groups * kLanes - length);
      }
    }
    return lanes;
  }
  for (size_t k = 0; k < groups; ++k) {
    Group group;
    if ((k + 1) * kLanes <= length) {
      if constexpr (kInteger) {
        add_int(x + k * kLanes, kLanes, group, false);
      } else {
        LoadGroup<kDType>(x + k * kLanes, group);
      }
    } else {  // the last few, padded with NaN (skipped, then taken out of the NaN count)
      Storage padded[kLanes];
      LoadRest<kDType>(x + k * kLanes, length - k * kLanes, padded);
      if constexpr (kInteger) {
        add_int(padded, length - k * kLanes, group, true);
      } else {
        LoadGroup<kDType>(padded, group);
      }
    }
    if constexpr (kKeep) g[k] = group;
    for (size_t v = 0; v < kVectors; ++v) {
      const Lanes a = group.v[v];
      Lanes kept = a;
      if constexpr (!kNanFree) {
        const Mask valid = a == a;
        lanes.nans[v] += valid + 1;
        kept = Keep(valid, a);
      }
      if constexpr (!kSum) {
        if constexpr (kNanFree && !kInteger) lanes.sum[v] += a;  // the probe
      } else if constexpr (kDType == DType::kFloat64) {          // compensated, as ReduceBlock's
        const Lanes sum = lanes.sum[v] + kept;
        lanes.sum_lo[v] += TwoSumError(lanes.sum[v], kept, sum);
        lanes.sum[v] = sum;
      } else if constexpr (!kInteger) {  // float64 lanes of narrower floats: exact enough
        // Without the masks, whole groups' sums start from the first group, not 0 + it: that
        // differs only where the lane is -0, and the answers' total + 0 makes that +0 again
        // (runs_answers.cc; the lanes stay equal, or zeros of either sign, through the combine).
        lanes.sum[v] = (kNanFree && kGroups > 0 && k == 0) ? kept : lanes.sum[v] + kept;
      }
      if constexpr (kSquares) {  // (a square is never -0, so 0 + it is it)
        lanes.squares[v] = (kGroups > 0 && k == 0) ? kept * kept : lanes.squares[v] + kept * kept;
      }
      if constexpr (kLaneMin) lanes.least[v] = Blend(a < lanes.least[v], a, lanes.least[v]);
      if constexpr (kLaneMax) lanes.most[v] = Blend(a > lanes.most[v], a, lanes.most[v]);
    }
  }
  return lanes;
}

// The squared deviations of a run's non-NaN elements from `mean`, in lanes. kNanFree: the groups
// hold no NaN (nor padding), so none is masked out: the same bits, a compare a vector fewer.
template <bool kNanFree = false>
__attribute__((always_inline)) inline void AddDeviations(const Group* g, size_t groups, double mean,
                                                         Lanes* m2) {
  for (size_t k = 0; k < groups; ++k) {
    for (size_t v = 0; v < kVectors; ++v) {
      const Lanes d = g[k].v[v] - mean;
      m2[v] += kNanFree ? d * d : Keep(g[k].v[v] == g[k].v[v], d * d);
    }
  }
}

// Which of a group's elements equal `target`, a bit each.
__attribute__((always_inline)) inline uint64_t EqualBits(const Group& group, double target) {
#if defined(__AVX512F__)
  return _mm512_cmp_pd_mask(reinterpret_cast<__m512d>(group.v[0]), _mm512_set1_pd(target),
                            _CMP_EQ_OQ);
#elif defined(__AVX__)
  const __m256d t = _mm256_set1_pd(target);
  const auto low = _mm256_movemask_pd(_mm256_cmp_pd(reinterpret_cast<__m256d>(group.v[0]), t, 0));
  const auto high = _mm256_movemask_pd(_mm256_cmp_pd(reinterpret_cast<__m256d>(group.v[1]), t, 0));
  return static_cast<uint64_t>(low) | static_cast<uint64_t>(high) << 4;
#else
  const __m128d t = _mm_set1_pd(target);
  uint64_t bits = 0;
  for (size_t v = 0; v < kVectors; ++v) {
    const auto hit = _mm_movemask_pd(_mm_cmpeq_pd(reinterpret_cast<__m128d>(group.v[v]), t));
    bits |= static_cast<uint64_t>(hit) << (v * kWidth);
  }
  return bits;
#endif
}

// The first element equal to `target` (there is one): eight groups' compares gathered into a
// word, without a branch a group, and no word after the first that holds it (over runs of 512,
// scanning every group, its bits or'd into memory, took a third of the five-op request's time).
inline int64_t FirstEqual(const Group* groups, size_t count, double target) {
  for (size_t k0 = 0; k0 < count; k0 += 8) {
    const size_t n = std::min<size_t>(8, count - k0);
    uint64_t word = 0;
    for (size_t k = 0; k < n; ++k) word |= EqualBits(groups[k0 + k], target) << (k * 8);
    if (word != 0) return static_cast<int64_t>(k0 * 8 + static_cast<size_t>(__builtin_ctzll(word)));
  }
  return 0;  // not reached: the extreme is one of the groups' elements
}

// Element `index` as its group holds it (exactly its value).
inline double ElementOf(const Group* groups, int64_t index) {
  double value;
  std::memcpy(&value, reinterpret_cast<const char*>(groups) + index * sizeof(double),
              sizeof(value));
  return value;
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES
