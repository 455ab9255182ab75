#pragma once

// What the short runs pass's answers (runs_answers.cc) read of eight runs: their totals and
// counts (EightFacts), int64's sums and FloatSum from their halves, the extremes' first indices,
// which zero an extreme of 0 is, and the moments' squared deviations. Needs AVX-512. Included by
// the passes only, in their namespace.

#if defined(__AVX512F__)
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "common/reduction/op.h"
#include "kernels/cpu/eight_runs.h"
#include "kernels/cpu/run_lanes.h"

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {

// The first index of each run's extreme, or of its first NaN where `op` (an arg op) does not skip
// NaN (IndexAnswer's); false where a NAN form meets a run of NaN alone (FinalizeOp refuses it).
template <DType kDType>
inline bool IndicesInto(const typename Element<kDType>::Storage* x, const uint64_t* bounds,
                        uint64_t base, const Group* g, const size_t* at, Op op, const Mask& nans,
                        const Mask& valid, const Lanes& extreme, std::byte* out) {
  int64_t indices[kEightRuns];
  for (size_t r = 0; r < kEightRuns; ++r) {
    if constexpr (kDType == DType::kInt64) {  // extreme: the lanes' int64 bits, exact
      indices[r] = FirstEqualInt(x + (bounds[r] - base), bounds[r + 1] - bounds[r],
                                 reinterpret_cast<Mask>(extreme)[r]);
    } else if (!OpSkipsNan(op) && nans[r] > 0) {
      indices[r] = FirstNanOf<kDType>(x + (bounds[r] - base), bounds[r + 1] - bounds[r]);
    } else if (valid[r] == 0) {
      return false;
    } else {
      indices[r] = FirstEqual(g + at[r], at[r + 1] - at[r], extreme[r]);
    }
  }
  std::memcpy(out, indices, sizeof(indices));
  return true;
}

// The first of a run's elements equal to 0, as float64 (-0 or 0): which of the two an extreme of
// 0 is (Finish's first_of), read from the input a group at a time where the copy kept no groups
// (element by element, non-negative rows holding a 0 read MIN 1.8-7.9x slower than before).
template <DType kDType>
inline double FirstZeroOf(const typename Element<kDType>::Storage* x, size_t length) {
  for (size_t at = 0; at < length; at += kLanes) {
    Group group;
    LoadRunGroup<kDType>(x, length, at, group);  // padded with NaN, which equals nothing
    const uint64_t bits = EqualBits(group, 0.0);
    if (bits != 0) return ElementOf(&group, __builtin_ctzll(bits));
  }
  return 0.0;  // not reached: the extreme is one of the run's elements
}

// Eight int64 runs' SUM answers, exact, from their halves' sums (2^32 h + l, Finish's); false,
// nothing written, where one of them wraps (it is left to the Stats, which count it).
inline bool Int64Sums(const EightTotals& t, std::byte* out) {
  alignas(64) int64_t high[kEightRuns], low[kEightRuns], sums[kEightRuns];
  _mm512_store_si512(high, t.int_sum);
  _mm512_store_si512(low, t.int_low);
  bool wraps = false;
  for (size_t r = 0; r < kEightRuns; ++r) {
    const Int128 exact = FromHalves(high[r], low[r]);
    sums[r] = static_cast<int64_t>(exact);
    wraps |= exact != sums[r];
  }
  if (wraps) return false;
  std::memcpy(out, sums, sizeof(sums));
  return true;
}

// Eight int64 runs' FloatSum, each exact sum (2^32 h + l) rounded once, as Finish's (a libgcc
// call each: taken only where MEAN or VAR reads them, rows of 16 SUM 0.75x where it was not).
inline Lanes Int64Totals(const EightTotals& t) {
  alignas(64) int64_t high[kEightRuns], low[kEightRuns];
  alignas(64) double totals[kEightRuns];
  _mm512_store_si512(high, t.int_sum);
  _mm512_store_si512(low, t.int_low);
  for (size_t r = 0; r < kEightRuns; ++r) {
    totals[r] = static_cast<double>(FromHalves(high[r], low[r]));
  }
  Lanes out;
  std::memcpy(&out, totals, sizeof(out));
  return out;
}

// What eight runs' answers are computed from: their totals (lane r run r's), groups, lengths,
// NaN counts and FloatSum, and their moments' m2 once one op has asked for it.
template <DType kDType>
struct EightFacts {
  const typename Element<kDType>::Storage* x;
  const uint64_t* bounds;
  uint64_t base;
  const Group* g;
  const size_t* at;
  EightTotals t;
  Mask lengths, nans, valid;
  Lanes total;
  bool nan_free = false;  // the NaN-free pass added whole groups: no NaN, no padding
  bool have_m2 = false;
  Lanes m2;
};

// The runs' FloatSum (int64's computed here, once per op: its copies answer one op).
template <DType kDType>
__attribute__((always_inline)) inline Lanes TotalOf(const EightFacts<kDType>& f) {
  if constexpr (kDType == DType::kInt64) {
    return Int64Totals(f.t);
  } else {
    return f.total;
  }
}

// The runs' squared deviations from their means (lane r run r's, for VAR and STD): from the
// groups kept (kKeep, or runs of no shared length) or the runs read again, without the NaN mask
// where the NaN-free pass added them.
template <DType kDType, bool kKeep, size_t kGroups>
__attribute__((always_inline)) inline Lanes EightM2(const EightFacts<kDType>& f,
                                                    const double* means) {
  const auto deviations = [&]<bool kNanFree>() __attribute__((always_inline)) {
    if constexpr (kKeep || kGroups == 0) {
      return EightDeviations<kGroups, kNanFree>(f.g, f.at, means);
    } else {
      return EightDeviationsOf<kDType, kGroups, kNanFree>(f.x, f.bounds, f.base, means);
    }
  };
  return reinterpret_cast<Lanes>(f.nan_free ? deviations.template operator()<true>()
                                            : deviations.template operator()<false>());
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES

#endif  // __AVX512F__
