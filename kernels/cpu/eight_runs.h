#pragma once

// Eight runs of the short runs pass at once (its AVX-512 copy): each run's groups added in
// lanes (run_lanes.h), then the eight runs' lanes combined together (combine_eight.h), so that
// lane r of each total is run r's. Both ends of the pass start here: runs_pass.cc makes each
// run's Stats of them, runs_answers.cc an op's answers straight from the vectors. Included by
// the passes only, in their namespace.

#if defined(__AVX512F__)
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/combine_eight.h"
#include "kernels/cpu/run_lanes.h"
#include "kernels/cpu/sum_lanes.h"

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {

inline constexpr size_t kEightRuns = 8;

// The groups each of eight runs has where they all have that many whole ones (rows of a multiple
// of kLanes, and segments of one such length); 0 where they don't.
inline size_t SharedGroups(const uint64_t* bounds) {
  const uint64_t length = bounds[1] - bounds[0];
  bool shared = length % kLanes == 0;
  for (size_t r = 1; r < kEightRuns; ++r) shared &= bounds[r + 1] - bounds[r] == length;
  return shared ? length / kLanes : 0;
}

// Calls f.template operator()<kGroups>() with the kGroups of AddEightRuns's copy for eight runs of
// `groups` whole groups each (SharedGroups): rows of 8 to 32, 64 and 128 elements unrolled, the
// general copy (0) for the others.
template <typename F>
__attribute__((always_inline)) inline void WithGroups(size_t groups, F&& f) {
  switch (groups) {
    case 1:
      return f.template operator()<1>();
    case 2:
      return f.template operator()<2>();
    case 3:
      return f.template operator()<3>();
    case 4:
      return f.template operator()<4>();
    case 8:
      return f.template operator()<8>();
    case 16:
      return f.template operator()<16>();
    default:
      return f.template operator()<0>();
  }
}

// Eight runs of x, run r from bounds[r] - base to bounds[r + 1] - base, walked in order with
// their lines asked for ahead (PrefetchAhead). Runs of kGroups > 0 whole groups each lie one
// after another from the first, so their starts are constants from it. Runs of up to 4 groups
// are unrolled, their lanes kept in registers, and their lines asked for at once: a prefetch
// loop, an address and a store a run had cost 16-bit runs of 16 a fifth of their rate (16
// threads of the H200 host: their SUM, VAR and PROD 1.15-1.35x). Longer runs ask a run at a time
// (128 prefetches at once cost runs of 128 int64 0.8x) and stay loops (every copy unrolled made
// the passes' code 3.5 times longer). (bounds[r + 1] is both run r's end and run r + 1's start.)
// Without kAskAhead, nothing is asked for: a second look at runs just read.
template <size_t kGroups, typename Storage, bool kAskAhead = true>
class EightRunsOf {
 public:
  __attribute__((always_inline))
  EightRunsOf(const Storage* x, const uint64_t* bounds, uint64_t base)
      : x_(x), bounds_(bounds), base_(base), first_(x + (bounds[0] - base)) {
    if constexpr (kShort && kAskAhead) PrefetchAhead(first_, kEightRuns * kGroups * kLanes);
  }

  __attribute__((always_inline)) uint64_t Length(size_t r) const {
    return kGroups > 0 ? kGroups * kLanes : bounds_[r + 1] - bounds_[r];
  }
  __attribute__((always_inline)) const Storage* Start(size_t r) const {
    return kGroups > 0 ? first_ + r * kGroups * kLanes : x_ + (bounds_[r] - base_);
  }

  // f(r, run, length) for r = 0 to 7.
  template <typename F>
  __attribute__((always_inline)) void ForEach(F&& f) const {
    const auto one = [&](size_t r) __attribute__((always_inline)) {
      if constexpr (!kShort && kAskAhead) PrefetchAhead(Start(r), Length(r));
      f(r, Start(r), Length(r));
    };
    if constexpr (kShort) {  // (the same loop twice: a pragma cannot be conditional)
#pragma GCC unroll 8
      for (size_t r = 0; r < kEightRuns; ++r) one(r);
    } else {
      for (size_t r = 0; r < kEightRuns; ++r) one(r);
    }
  }

 private:
  static constexpr bool kShort = kGroups > 0 && kGroups <= 4;
  const Storage* x_;
  const uint64_t* bounds_;
  uint64_t base_;
  const Storage* first_;
};

// Eight runs' totals, lane r run r's: only those the request needs are set.
struct EightTotals {
  __m512i nans;     // the padding's included
  __m512i int_sum;  // int64's: the high halves' (int_low the low halves')
  __m512i int_low;
  __m512d sum;
  __m512d sum_lo;  // float64's: the total's rounding errors (CompensatedSumEight)
  __m512d squares;
  __m512d least;  // of -0 and 0 either
  __m512d most;
  __m512i int_least;  // int64's (its least and most unset)
  __m512i int_most;
};

// Runs bounds[r] - base .. bounds[r + 1] - base of x, r < 8, added and combined. With kKeep, each
// run's groups are kept in g from at[r] on (at[8]: all of them), one run after another (a run's
// kMaxGroups apart, the stores spread over 8 KiB and 4K-aliased the input's loads: SUM 0.8x a run
// at a time). kGroups > 0: every run has that many whole groups (SharedGroups), so the loops over
// them unroll and no run has a padded last group. Without kSum, no sums (t.sum, t.int_sum unset;
// with kNanFree, t.sum is NaN where a run may hold one, its lanes not the runs').
template <DType kDType, bool kSquares, bool kMin, bool kMax, bool kKeep, size_t kGroups,
          bool kSum = true, bool kNanFree = false>
__attribute__((always_inline)) inline EightTotals AddEightRuns(
    const typename Element<kDType>::Storage* x, const uint64_t* bounds, uint64_t base, Group* g,
    size_t* at) {
  // Each field's lanes of the eight runs, only those the request needs (so they stay in
  // registers: the whole RunLanes stored a run cost SUM 0.85x).
  constexpr bool kInteger = IsInteger(kDType);
  constexpr bool kHalves = kDType == DType::kInt64;
  constexpr bool kCompensated = kDType == DType::kFloat64;
  constexpr bool kIntExtremes = kHalves;  // int64's extremes in int64 lanes
  __m512d sum[kEightRuns], sum_lo[kEightRuns], nans[kEightRuns], int_sum[kEightRuns],
      int_low[kEightRuns], squares[kEightRuns], least[kEightRuns], most[kEightRuns];
  at[0] = 0;
  EightRunsOf<kGroups, typename Element<kDType>::Storage>(x, bounds, base)
      .ForEach([&](size_t r, const auto* run, uint64_t length) __attribute__((always_inline)) {
        at[r + 1] = at[r] + (length + kLanes - 1) / kLanes;
        const RunLanes lanes =
            AddRunGroups<kDType, kSquares, kMin, kMax, kKeep, kGroups, kSum, kNanFree>(run, length,
                                                                                       g + at[r]);
        nans[r] = reinterpret_cast<__m512d>(lanes.nans[0]);
        if constexpr (kSum && kInteger) int_sum[r] = reinterpret_cast<__m512d>(lanes.int_sum[0]);
        if constexpr (kSum && kHalves) int_low[r] = reinterpret_cast<__m512d>(lanes.int_low[0]);
        if constexpr ((kSum || kNanFree) && !kInteger)
          sum[r] = reinterpret_cast<__m512d>(lanes.sum[0]);
        if constexpr (kSum && kCompensated) sum_lo[r] = reinterpret_cast<__m512d>(lanes.sum_lo[0]);
        if constexpr (kSquares) squares[r] = reinterpret_cast<__m512d>(lanes.squares[0]);
        if constexpr (kMin) {
          least[r] = reinterpret_cast<__m512d>(
              kIntExtremes ? lanes.int_least[0] : reinterpret_cast<Mask>(lanes.least[0]));
        }
        if constexpr (kMax) {
          most[r] = reinterpret_cast<__m512d>(kIntExtremes ? lanes.int_most[0]
                                                           : reinterpret_cast<Mask>(lanes.most[0]));
        }
      });
  EightTotals t;
  t.nans = IntSumEight(nans);
  if constexpr (!kSum) {
    if constexpr (kNanFree && !kInteger) {  // the probes, for NaN alone: lanes mixed
      t.sum = _mm512_add_pd(
          _mm512_add_pd(_mm512_add_pd(sum[0], sum[1]), _mm512_add_pd(sum[2], sum[3])),
          _mm512_add_pd(_mm512_add_pd(sum[4], sum[5]), _mm512_add_pd(sum[6], sum[7])));
    }
  } else if constexpr (kInteger) {
    t.int_sum = IntSumEight(int_sum);
    if constexpr (kHalves) t.int_low = IntSumEight(int_low);
  } else if constexpr (kCompensated) {
    t.sum = CompensatedSumEight(sum, sum_lo, t.sum_lo);
  } else {
    t.sum = SumEight(sum);
  }
  if constexpr (kSquares) t.squares = SumEight(squares);
  if constexpr (kMin && kIntExtremes) t.int_least = IntLeastEight(least);
  if constexpr (kMax && kIntExtremes) t.int_most = IntMostEight(most);
  if constexpr (kMin && !kIntExtremes) t.least = LeastEight(least);
  if constexpr (kMax && !kIntExtremes) t.most = MostEight(most);
  return t;
}

// The squared deviations of each run's kept groups (AddEightRuns's g and at) from its mean,
// combined as the lanes: lane r is run r's. kGroups > 0: AddEightRuns's copy for runs of that
// many groups each (the loops unroll). kNanFree as AddDeviations'.
template <size_t kGroups = 0, bool kNanFree = false>
__attribute__((always_inline)) inline __m512d EightDeviations(const Group* g, const size_t* at,
                                                              const double* means) {
  __m512d deviations[kEightRuns];
  for (size_t r = 0; r < kEightRuns; ++r) {
    Lanes m2[kVectors] = {};
    if constexpr (kGroups > 0) {
      AddDeviations<kNanFree>(g + r * kGroups, kGroups, means[r], m2);
    } else {
      AddDeviations<kNanFree>(g + at[r], at[r + 1] - at[r], means[r], m2);
    }
    deviations[r] = reinterpret_cast<__m512d>(m2[0]);
  }
  return SumEight(deviations);
}

// The same for runs of kGroups whole groups each read again from the input (x, bounds and base
// as AddEightRuns's), where no groups were kept: the same values, so the same bits, without a
// store a group (rows of 16 VAR 1.1x, one thread of the dev VM).
template <DType kDType, size_t kGroups, bool kNanFree = false>
__attribute__((always_inline)) inline __m512d EightDeviationsOf(
    const typename Element<kDType>::Storage* x, const uint64_t* bounds, uint64_t base,
    const double* means) {
  static_assert(kGroups > 0, "a run's padded last group is kept, not read again");
  __m512d deviations[kEightRuns];
  EightRunsOf<kGroups, typename Element<kDType>::Storage, false>(x, bounds, base)
      .ForEach([&](size_t r, const auto* run, uint64_t length) __attribute__((always_inline)) {
        Group g[kGroups];
        for (size_t k = 0; k < kGroups; ++k) LoadRunGroup<kDType>(run, length, k * kLanes, g[k]);
        Lanes m2[kVectors] = {};
        AddDeviations<kNanFree>(g, kGroups, means[r], m2);
        deviations[r] = reinterpret_cast<__m512d>(m2[0]);
      });
  return SumEight(deviations);
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES

#endif  // __AVX512F__
