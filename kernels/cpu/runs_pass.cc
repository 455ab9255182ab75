// The short runs pass (block_reduce.h's add_runs): runs of a few float or int32 elements (a
// table's short rows, short segments), each reduced to its own Stats where it lies, in the sums
// pass's kLanes float64 lanes (sum_lanes.h): element e of a run in lane e % kLanes, the lanes then
// combined in a fixed order. No transposed copy (the columns pass's) and no set-up per run
// (ReduceBlock's), and the same bits in every copy: each lane's arithmetic is the source's, the
// combining scalar.

#include <immintrin.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/cpu/block_reduce.h"
#include "kernels/cpu/element_load.h"
#include "kernels/cpu/sum_lanes.h"

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {
namespace {

constexpr size_t kMaxGroups = kLongestRun / kLanes;
constexpr size_t kAhead = 4096;
static_assert(kLongestRun % kLanes == 0);

// A run's group of kLanes elements as float64 lanes.
struct Group {
  Lanes v[kVectors];
};

// a where `take`, else b, lane by lane (bitwise: GCC lowers a vector select).
__attribute__((always_inline)) inline Lanes Blend(const Mask& take, const Lanes& a,
                                                  const Lanes& b) {
  return reinterpret_cast<Lanes>((reinterpret_cast<Mask>(a) & take) |
                                 (reinterpret_cast<Mask>(b) & ~take));
}

// The lanes' sum, in one order for every copy: each lane with the one kLanes / 2 after it, then
// those sums pairwise likewise.
inline double Total(const Lanes* lanes) {
  double l[kLanes];
  std::memcpy(l, lanes, sizeof(l));
  return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]));
}

// A NaN's storage (an int32 run's padding: 0, made NaN once widened, PadLanes).
template <DType kDType>
typename Element<kDType>::Storage NanStorage() {
  if constexpr (kDType == DType::kInt32) {
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

// An int32 group: float64 lanes (exact) for all but the sum, added exactly in int64 lanes.
__attribute__((always_inline)) inline void LoadIntGroup(const int32_t* x, Group& out, Mask* sum) {
  for (size_t v = 0; v < kVectors; ++v) {
    Int32Lanes narrow;
    std::memcpy(&narrow, x + v * kWidth, sizeof(narrow));
    out.v[v] = ToDouble(narrow);
    sum[v] += ToInt64(narrow);
  }
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
  } else {
    const __m128i nan = _mm_set1_epi16(static_cast<int16_t>(NanStorage<kDType>()));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(padded), _mm_mask_loadu_epi16(nan, take, x));
  }
#else
  for (size_t i = 0; i < kLanes; ++i) padded[i] = i < rest ? x[i] : NanStorage<kDType>();
#endif
}

// The first element equal to `target` (there is one), without a branch a group.
inline int64_t FirstEqual(const Group* groups, size_t count, double target) {
  uint64_t words[(kMaxGroups + 7) / 8] = {};
  for (size_t k = 0; k < count; ++k) words[k / 8] |= EqualBits(groups[k], target) << (k % 8 * 8);
  size_t w = 0;
  while (words[w] == 0) ++w;
  return static_cast<int64_t>(w * 64 + static_cast<size_t>(__builtin_ctzll(words[w])));
}

// The first element holding the least (kLess) or greatest of the lanes' extremes: the value
// over the lanes, then its first element (so of -0 and 0, the first's).
template <bool kLess>
inline int64_t FirstExtreme(const Lanes* lanes, const Group* groups, size_t count) {
  double l[kLanes];
  std::memcpy(l, lanes, sizeof(l));
  double best = l[0];
  for (size_t i = 1; i < kLanes; ++i) best = (kLess ? l[i] < best : l[i] > best) ? l[i] : best;
  return FirstEqual(groups, count, best);
}

// Element `index` as its group holds it (exactly its value).
inline double ElementOf(const Group* groups, int64_t index) {
  double value;
  std::memcpy(&value, reinterpret_cast<const char*>(groups) + index * sizeof(double),
              sizeof(value));
  return value;
}

template <DType kDType, bool kSquares, bool kMin, bool kMax, bool kMoments>
void RunStats(const typename Element<kDType>::Storage* x, size_t length, Stats& out) {
  using Storage = typename Element<kDType>::Storage;
  constexpr bool kInteger = kDType == DType::kInt32;
  const size_t groups = (length + kLanes - 1) / kLanes;
  Group g[kMaxGroups];
  Lanes sum[kVectors] = {};
  Mask int_sum[kVectors] = {};
  Lanes squares[kVectors] = {};
  Mask nans[kVectors] = {};
  Lanes least[kVectors], most[kVectors];
  for (size_t v = 0; v < kVectors; ++v) {
    least[v] = Lanes{} + std::numeric_limits<double>::infinity();
    most[v] = Lanes{} - std::numeric_limits<double>::infinity();
  }
  for (size_t k = 0; k < groups; ++k) {
    if ((k + 1) * kLanes <= length) {
      if constexpr (kInteger) {
        LoadIntGroup(x + k * kLanes, g[k], int_sum);
      } else {
        LoadGroup<kDType>(x + k * kLanes, g[k]);
      }
    } else {  // the last few, padded with NaN (skipped, then taken out of the NaN count)
      Storage padded[kLanes];
      LoadRest<kDType>(x + k * kLanes, length - k * kLanes, padded);
      if constexpr (kInteger) {
        LoadIntGroup(padded, g[k], int_sum);
        PadLanes(length - k * kLanes, g[k]);
      } else {
        LoadGroup<kDType>(padded, g[k]);
      }
    }
    for (size_t v = 0; v < kVectors; ++v) {
      const Lanes a = g[k].v[v];
      const Mask valid = a == a;
      nans[v] += valid + 1;
      const Lanes kept = Keep(valid, a);
      if constexpr (!kInteger) sum[v] += kept;
      if constexpr (kSquares) squares[v] += kept * kept;
      // A NaN compares false.
      if constexpr (kMin) least[v] = Blend(a < least[v], a, least[v]);
      if constexpr (kMax) most[v] = Blend(a > most[v], a, most[v]);
    }
  }
  int64_t nan_lanes[kLanes];
  std::memcpy(nan_lanes, nans, sizeof(nan_lanes));
  uint64_t nan_count = 0;
  for (int64_t n : nan_lanes) nan_count += static_cast<uint64_t>(n);
  nan_count -= groups * kLanes - length;
  const uint64_t valid = length - nan_count;
  out = Stats{};
  out.count = length;
  out.nan_count = nan_count;
  if constexpr (kInteger) {  // exact: 128 int32 stay far inside int64
    out.integer = true;
    int64_t lanes[kLanes];
    std::memcpy(lanes, int_sum, sizeof(lanes));
    for (int64_t lane : lanes) out.int_sum += lane;
  } else {
    out.first_nan = nan_count > 0 ? FirstNanOf<kDType>(x, length) : -1;
    out.sum = Total(sum);
  }
  if constexpr (kSquares) out.sum_squares = Total(squares);
  if constexpr (kMin) {
    if (valid > 0) {
      out.min_index = FirstExtreme<true>(least, g, groups);
      const double value = ElementOf(g, out.min_index);
      if constexpr (kInteger) {
        out.int_min = static_cast<int64_t>(value);
      } else {
        out.min = value;
      }
    }
  }
  if constexpr (kMax) {
    if (valid > 0) {
      out.max_index = FirstExtreme<false>(most, g, groups);
      const double value = ElementOf(g, out.max_index);
      if constexpr (kInteger) {
        out.int_max = static_cast<int64_t>(value);
      } else {
        out.max = value;
      }
    }
  }
  if constexpr (kMoments) {
    const double total = kInteger ? static_cast<double>(out.int_sum) : out.sum;
    const double mean = valid > 0 ? total / static_cast<double>(valid) : 0.0;
    Lanes m2[kVectors] = {};
    for (size_t k = 0; k < groups; ++k) {
      for (size_t v = 0; v < kVectors; ++v) {
        const Lanes d = g[k].v[v] - mean;
        m2[v] += Keep(g[k].v[v] == g[k].v[v], d * d);
      }
    }
    out.mean = mean;
    out.m2 = std::isfinite(mean) ? Total(m2) : 0.0;
  }
}

template <DType kDType, bool kSquares, bool kMin, bool kMax, bool kMoments>
void RunsOf(const std::byte* data, const uint64_t* bounds, uint64_t base, size_t runs, Stats* out) {
  using Storage = typename Element<kDType>::Storage;
  const auto* x = reinterpret_cast<const Storage*>(data);
  for (size_t r = 0; r < runs; ++r) {
    const Storage* run = x + (bounds[r] - base);
    const uint64_t length = bounds[r + 1] - bounds[r];
    // A run's work is short and branchy, so the core reads few runs ahead: the lines kAhead
    // bytes on are asked for now (into L2: 1.15x at rows of 16 float32, one thread of the dev
    // VM, against into L1 and 2 KiB ahead).
    // (As integers: the address may lie past the array; a prefetch there is harmless.)
    const auto from = reinterpret_cast<uintptr_t>(run);
    for (uintptr_t line = from; line < from + length * sizeof(Storage); line += 64) {
      __builtin_prefetch(reinterpret_cast<const void*>(line + kAhead), 0, 2);
    }
    RunStats<kDType, kSquares, kMin, kMax, kMoments>(run, length, out[r]);
  }
}

template <DType kDType, bool kMoments>
void RunsWithMoments(const StatsNeeds& needs, const std::byte* data, const uint64_t* bounds,
                     uint64_t base, size_t runs, Stats* out) {
  if (needs.min && needs.max) {
    RunsOf<kDType, false, true, true, kMoments>(data, bounds, base, runs, out);
  } else if (needs.min) {
    RunsOf<kDType, false, true, false, kMoments>(data, bounds, base, runs, out);
  } else if (needs.max) {
    RunsOf<kDType, false, false, true, kMoments>(data, bounds, base, runs, out);
  } else {
    RunsOf<kDType, false, false, false, kMoments>(data, bounds, base, runs, out);
  }
}

template <DType kDType>
void RunsFor(const StatsNeeds& needs, const std::byte* data, const uint64_t* bounds, uint64_t base,
             size_t runs, Stats* out) {
  if (needs.sum_squares) {  // rare beside extremes or moments: one copy for all
    RunsOf<kDType, true, true, true, true>(data, bounds, base, runs, out);
  } else if (needs.moments) {
    RunsWithMoments<kDType, true>(needs, data, bounds, base, runs, out);
  } else {
    RunsWithMoments<kDType, false>(needs, data, bounds, base, runs, out);
  }
}

}  // namespace

void AddRuns(DType dtype, const StatsNeeds& needs, const std::byte* data, const uint64_t* bounds,
             uint64_t base, size_t runs, Stats* out) {
  switch (dtype) {
    case DType::kFloat32:
      return RunsFor<DType::kFloat32>(needs, data, bounds, base, runs, out);
    case DType::kFloat16:
      return RunsFor<DType::kFloat16>(needs, data, bounds, base, runs, out);
    case DType::kBFloat16:
      return RunsFor<DType::kBFloat16>(needs, data, bounds, base, runs, out);
    case DType::kFloat64:
      return RunsFor<DType::kFloat64>(needs, data, bounds, base, runs, out);
    case DType::kInt32:
      return RunsFor<DType::kInt32>(needs, data, bounds, base, runs, out);
    case DType::kInt64:
      return;  // RunsPassTakes refuses it
  }
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES
