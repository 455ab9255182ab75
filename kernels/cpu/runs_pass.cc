// The short runs pass (block_reduce.h's add_runs): runs of a few float or integer elements (a
// table's short rows, short segments), each reduced to its own Stats where it lies, in the sums
// pass's kLanes float64 lanes (sum_lanes.h): element e of a run in lane e % kLanes, the lanes then
// combined in a fixed order. No transposed copy (the columns pass's) and no set-up per run
// (ReduceBlock's), and the same bits in every copy: each lane's arithmetic is the source's, the
// combining in one order (the AVX-512 copy combines eight runs' lanes at once, combine_eight.h,
// in that order).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/block_reduce.h"
#include "kernels/cpu/eight_runs.h"
#include "kernels/cpu/element_load.h"
#include "kernels/cpu/run_lanes.h"
#include "kernels/cpu/run_products.h"
#include "kernels/cpu/sum_lanes.h"

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {
namespace {

// The lanes' sum, in one order for every copy: each lane with the one kLanes / 2 after it, then
// those sums pairwise likewise (CombineEight's order).
inline double Total(const Lanes* lanes) {
  double l[kLanes];
  std::memcpy(l, lanes, sizeof(l));
  return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]));
}

// The lanes' compensated sum (float64's: each lane's sum and its additions' errors in `lo`): the
// same tree as Total, each addition's rounding error added to its operands' errors, (lo_a + lo_b)
// + error, as CombineEight's CompensatedSumEight does lane by lane. `lo_out` gets the total's.
inline double CompensatedTotal(const Lanes* hi_lanes, const Lanes* lo_lanes, double& lo_out) {
  double hi[kLanes], lo[kLanes];
  std::memcpy(hi, hi_lanes, sizeof(hi));
  std::memcpy(lo, lo_lanes, sizeof(lo));
  for (size_t apart = kLanes / 2; apart >= 1; apart /= 2) {
    for (size_t i = 0; i < apart; ++i) {
      const double sum = hi[i] + hi[i + apart];
      lo[i] = (lo[i] + lo[i + apart]) + TwoSumError(hi[i], hi[i + apart], sum);
      hi[i] = sum;
    }
  }
  lo_out = lo[0];
  return hi[0];
}

// A run's lanes combined: the sums', the NaN count (its padding's included), the extremes'.
// Only the fields the request needs are set (no initializers: zeroing eight of them per eight
// runs cost more than combining them).
struct RunTotals {
  double sum;
  double sum_lo;  // float64's
  double squares;
  int64_t int_sum;  // int64's: the high halves' (int_low the low halves')
  int64_t int_low;
  int64_t nans;
  double least;  // of -0 and 0 either: the first element equal to it is the extreme
  double most;
  int64_t int_least;  // int64's
  int64_t int_most;
};

template <DType kDType, bool kSquares, bool kMin, bool kMax>
__attribute__((always_inline)) inline RunTotals TotalsOf(const RunLanes& lanes) {
  constexpr bool kCompensated = kDType == DType::kFloat64;
  RunTotals t{};
  if constexpr (kCompensated) {
    t.sum = CompensatedTotal(lanes.sum, lanes.sum_lo, t.sum_lo);
  } else {
    t.sum = Total(lanes.sum);
  }
  if constexpr (kSquares) t.squares = Total(lanes.squares);
  int64_t words[kLanes];
  std::memcpy(words, lanes.int_sum, sizeof(words));
  for (int64_t w : words) t.int_sum += w;
  std::memcpy(words, lanes.int_low, sizeof(words));
  for (int64_t w : words) t.int_low += w;
  std::memcpy(words, lanes.nans, sizeof(words));
  for (int64_t w : words) t.nans += w;
  if constexpr (kDType == DType::kInt64) {  // its extremes' lanes are int64's (AddIntExtremes)
    if constexpr (kMin) {
      std::memcpy(words, lanes.int_least, sizeof(words));
      t.int_least = words[0];
      for (int64_t w : words) t.int_least = w < t.int_least ? w : t.int_least;
    }
    if constexpr (kMax) {
      std::memcpy(words, lanes.int_most, sizeof(words));
      t.int_most = words[0];
      for (int64_t w : words) t.int_most = w > t.int_most ? w : t.int_most;
    }
    return t;
  }
  double l[kLanes];
  if constexpr (kMin) {
    std::memcpy(l, lanes.least, sizeof(l));
    t.least = l[0];
    for (size_t i = 1; i < kLanes; ++i) t.least = l[i] < t.least ? l[i] : t.least;
  }
  if constexpr (kMax) {
    std::memcpy(l, lanes.most, sizeof(l));
    t.most = l[0];
    for (size_t i = 1; i < kLanes; ++i) t.most = l[i] > t.most ? l[i] : t.most;
  }
  return t;
}

// A run's Stats from its totals and its groups (the first NaN, the extremes' first elements),
// all but the moments' m2 (its mean is set).
template <DType kDType, bool kSquares, bool kMin, bool kMax, bool kMoments>
__attribute__((always_inline)) inline void Finish(const typename Element<kDType>::Storage* x,
                                                  size_t length, const Group* g, const RunTotals& t,
                                                  Stats& out) {
  constexpr bool kInteger = IsInteger(kDType);
  const size_t groups = (length + kLanes - 1) / kLanes;
  const uint64_t nan_count = static_cast<uint64_t>(t.nans) - (groups * kLanes - length);
  const uint64_t valid = length - nan_count;
  out = Stats{};
  out.count = length;
  out.nan_count = nan_count;
  [[maybe_unused]] double total = 0;        // FloatSum's: the mean's numerator
  if constexpr (kDType == DType::kInt64) {  // the halves' 2^32 h + l, wrapped as NumPy's
    const Int128 exact = FromHalves(t.int_sum, t.int_low);
    out.integer = true;
    SetExactSum(exact, out);
    total = static_cast<double>(exact);
  } else if constexpr (kInteger) {  // exact: 512 int32 stay far inside int64
    out.integer = true;
    out.int_sum = t.int_sum;
    total = static_cast<double>(t.int_sum);
  } else {
    out.first_nan = nan_count > 0 ? FirstNanOf<kDType>(x, length) : -1;
    out.sum = t.sum;
    // (An infinite lane's errors are NaN, as ReduceBlock's.)
    if constexpr (kDType == DType::kFloat64) out.sum_lo = std::isfinite(t.sum) ? t.sum_lo : 0.0;
    total = out.sum + out.sum_lo;
  }
  if constexpr (kSquares) out.sum_squares = t.squares;
  // An extreme's first element equal to its value over the lanes, and that element's value.
  const auto first_of = [&](double extreme, int64_t& index, double& value, int64_t& int_value) {
    index = FirstEqual(g, groups, extreme);
    if constexpr (kInteger) {
      int_value = static_cast<int64_t>(ElementOf(g, index));
    } else {
      value = ElementOf(g, index);
    }
  };
  if constexpr (kDType == DType::kInt64) {  // exact, found in the run itself
    if constexpr (kMin) {
      out.int_min = t.int_least;
      out.min_index = FirstEqualInt(x, length, t.int_least);
    }
    if constexpr (kMax) {
      out.int_max = t.int_most;
      out.max_index = FirstEqualInt(x, length, t.int_most);
    }
  } else {
    if constexpr (kMin) {
      if (valid > 0) first_of(t.least, out.min_index, out.min, out.int_min);
    }
    if constexpr (kMax) {
      if (valid > 0) first_of(t.most, out.max_index, out.max, out.int_max);
    }
  }
  if constexpr (kMoments) {
    out.mean = valid > 0 ? total / static_cast<double>(valid) : 0.0;
  }
}

// Whether a run's groups are kept for a second look: the extremes' first elements (int64's are
// found in the run itself) and the moments'.
constexpr bool KeepsGroups(DType dtype, bool extremes, bool moments) {
  return moments || (extremes && dtype != DType::kInt64);
}

template <DType kDType, bool kSquares, bool kMin, bool kMax, bool kMoments>
void OneRun(const typename Element<kDType>::Storage* x, size_t length, Stats& out) {
  Group g[kMaxGroups];
  const RunLanes lanes =
      AddRunGroups<kDType, kSquares, kMin, kMax, KeepsGroups(kDType, kMin || kMax, kMoments)>(
          x, length, g);
  Finish<kDType, kSquares, kMin, kMax, kMoments>(
      x, length, g, TotalsOf<kDType, kSquares, kMin, kMax>(lanes), out);
  if constexpr (kMoments) {
    Lanes m2[kVectors] = {};
    AddDeviations(g, (length + kLanes - 1) / kLanes, out.mean, m2);
    out.m2 = std::isfinite(out.mean) ? Total(m2) : 0.0;
  }
}

#if defined(__AVX512F__)
// Eight runs, their lanes combined together (combine_eight.h). Rows of 16, one thread of the dev
// VM, against a run at a time: VAR 1.7-1.9x, MIN 1.0-1.15x, SUM 0.95-1.1x. Over runs of 128, the
// five-op request read 0.86-0.92x on the dev VM, and it and MIN 0.72-0.91x on the H200 host's
// cores; going a run at a time past 64 elements did not win it back (docs/cpu-backend.md).
// Copies for runs of a few whole groups each (AddEightRuns's kGroups), one thread of the dev VM,
// float32: rows of 16 SUM 1.15x, MIN 1.25x; rows of 128 MIN 1.25-1.55x, five ops 1.3x. (Whole
// groups in a loop of their own, the count unknown, or unrolled by 4: no gain.)
template <DType kDType, bool kSquares, bool kMin, bool kMax, bool kMoments, size_t kGroups>
void EightRuns(const typename Element<kDType>::Storage* x, const uint64_t* bounds, uint64_t base,
               Stats* out) {
  Group g[kEightRuns * kMaxGroups];
  size_t at[kEightRuns + 1];
  const EightTotals totals =
      AddEightRuns<kDType, kSquares, kMin, kMax, KeepsGroups(kDType, kMin || kMax, kMoments),
                   kGroups>(x, bounds, base, g, at);
  constexpr bool kInteger = IsInteger(kDType);
  constexpr bool kCompensated = kDType == DType::kFloat64;
  alignas(64) int64_t nan_totals[kEightRuns], int_totals[kEightRuns], low_totals[kEightRuns];
  alignas(64) int64_t int_least_totals[kEightRuns], int_most_totals[kEightRuns];
  alignas(64) double sum_totals[kEightRuns], sum_lo_totals[kEightRuns], square_totals[kEightRuns],
      least_totals[kEightRuns], most_totals[kEightRuns];
  constexpr bool kIntExtremes = kDType == DType::kInt64;
  _mm512_store_si512(nan_totals, totals.nans);
  if constexpr (kInteger) _mm512_store_si512(int_totals, totals.int_sum);
  if constexpr (kDType == DType::kInt64) _mm512_store_si512(low_totals, totals.int_low);
  if constexpr (!kInteger) _mm512_store_pd(sum_totals, totals.sum);
  if constexpr (kCompensated) _mm512_store_pd(sum_lo_totals, totals.sum_lo);
  if constexpr (kSquares) _mm512_store_pd(square_totals, totals.squares);
  if constexpr (kMin && kIntExtremes) _mm512_store_si512(int_least_totals, totals.int_least);
  if constexpr (kMax && kIntExtremes) _mm512_store_si512(int_most_totals, totals.int_most);
  if constexpr (kMin && !kIntExtremes) _mm512_store_pd(least_totals, totals.least);
  if constexpr (kMax && !kIntExtremes) _mm512_store_pd(most_totals, totals.most);
  for (size_t r = 0; r < kEightRuns; ++r) {
    RunTotals t;
    t.nans = nan_totals[r];
    if constexpr (kInteger) t.int_sum = int_totals[r];
    if constexpr (kDType == DType::kInt64) t.int_low = low_totals[r];
    if constexpr (!kInteger) t.sum = sum_totals[r];
    if constexpr (kCompensated) t.sum_lo = sum_lo_totals[r];
    if constexpr (kSquares) t.squares = square_totals[r];
    if constexpr (kMin && kIntExtremes) t.int_least = int_least_totals[r];
    if constexpr (kMax && kIntExtremes) t.int_most = int_most_totals[r];
    if constexpr (kMin && !kIntExtremes) t.least = least_totals[r];
    if constexpr (kMax && !kIntExtremes) t.most = most_totals[r];
    const uint64_t length = kGroups > 0 ? kGroups * kLanes : bounds[r + 1] - bounds[r];
    Finish<kDType, kSquares, kMin, kMax, kMoments>(x + (bounds[r] - base), length, g + at[r], t,
                                                   out[r]);
  }
  if constexpr (kMoments) {
    double means[kEightRuns];
    for (size_t r = 0; r < kEightRuns; ++r) means[r] = out[r].mean;
    alignas(64) double m2_totals[kEightRuns];
    _mm512_store_pd(m2_totals, EightDeviations<kGroups>(g, at, means));
    for (size_t r = 0; r < kEightRuns; ++r) {
      out[r].m2 = std::isfinite(out[r].mean) ? m2_totals[r] : 0.0;
    }
  }
}
#endif

template <DType kDType, bool kSquares, bool kMin, bool kMax, bool kMoments>
void RunsOf(const std::byte* data, const uint64_t* bounds, uint64_t base, size_t runs, Stats* out) {
  using Storage = typename Element<kDType>::Storage;
  const auto* x = reinterpret_cast<const Storage*>(data);
  size_t r = 0;
#if defined(__AVX512F__)
  for (; r + kEightRuns <= runs; r += kEightRuns) {
    WithGroups(SharedGroups(bounds + r), [&]<size_t kGroups>() {
      EightRuns<kDType, kSquares, kMin, kMax, kMoments, kGroups>(x, bounds + r, base, out + r);
    });
  }
#endif
  for (; r < runs; ++r) {
    const Storage* run = x + (bounds[r] - base);
    const uint64_t length = bounds[r + 1] - bounds[r];
    PrefetchAhead(run, length);
    OneRun<kDType, kSquares, kMin, kMax, kMoments>(run, length, out[r]);
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
  if (needs.prod)
    return RunProducts<kDType>(data, bounds, base, runs, out);  // alone (RunsPassTakes)
  if constexpr (kDType != DType::kInt64) {  // int64 takes no squares (RunsPassTakes)
    if (needs.sum_squares) {                // rare beside extremes or moments: one copy for all
      return RunsOf<kDType, true, true, true, true>(data, bounds, base, runs, out);
    }
  }
  if (needs.moments) {
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
      return RunsFor<DType::kInt64>(needs, data, bounds, base, runs, out);
  }
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES
