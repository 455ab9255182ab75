// The short runs pass's answers (block_reduce.h's answer_runs): for a request's ops, eight runs'
// answers computed from their totals as vectors (eight_runs.h: lane r is run r's) and written
// into each op's result array, with no Stats between (one extreme op over 16-bit floats: by
// their keys instead, 32 runs at a time, key_runs.h). The Stats a run gets from add_runs, its
// FinalizeOp and its EncodeResult cost as much as the run's sums at 16 elements (one thread of
// the dev VM, rows of 16: float32 SUM 1.25-1.5x, MIN 1.4x, VAR 1.4x; int32 MIN 1.6x; float16
// SUM and MIN 1.3x; rows of 128 float32 MIN 1.7x). Each answer is the same arithmetic on the
// same values as FloatAnswer's over those Stats (answer_encoding.cc), stored as EncodeResult
// stores it (float32 by the vector conversion, static_cast's rounding; 16-bit floats by
// NarrowEight), so the bytes are EncodeAnswers's; runs_answers_test compares them. PROD alone by
// product_answers.h (floats) and int_product_answers.h (integers); not here: PROD beside other
// ops, int64's SUM_SQUARES or several ops, nor its SUM from eight runs one of which wraps (their
// Stats answer them, and count the wraps).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <tuple>

#include "common/reduction/op_result.h"
#include "kernels/cpu/block_reduce.h"
#include "kernels/cpu/eight_facts.h"
#include "kernels/cpu/eight_runs.h"
#include "kernels/cpu/int_product_answers.h"
#include "kernels/cpu/key_runs.h"
#include "kernels/cpu/narrow_eight.h"
#include "kernels/cpu/product_answers.h"

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {
namespace {

#if defined(__AVX512F__)
static_assert(kWidth == kEightRuns, "a vector of lanes holds the eight runs' totals");
typedef int32_t Int32x8 __attribute__((vector_size(32)));

Lanes AsLanes(__m512d v) { return reinterpret_cast<Lanes>(v); }
Mask AsMask(__m512i v) { return reinterpret_cast<Mask>(v); }
Lanes ToLanes(const Mask& v) { return __builtin_convertvector(v, Lanes); }

// Eight runs' answers of `op` (of the copy's needs) at out, out + size, ...; false where the op
// refuses one of them (NANARGMIN of NaN alone) or the copy lacks what it reads.
template <DType kDType, bool kSquares, bool kMin, bool kMax, bool kMoments, bool kSum, bool kKeep,
          size_t kGroups>
__attribute__((always_inline)) inline bool AnswerOp(EightFacts<kDType>& f, Op op, double ddof,
                                                    std::byte* out) {
  constexpr bool kInteger = IsInteger(kDType);
  const Op base_op = NanFormOf(op);
  const bool skips = OpSkipsNan(op);
  const Lanes nan = Lanes{} + std::numeric_limits<double>::quiet_NaN();
  // FloatAnswer's `nan`: a NaN the op does not skip makes the answer NaN.
  const Mask unskipped = skips ? Mask{} : f.nans != 0;
  Lanes value = nan;
  if (base_op == Op::kSum || base_op == Op::kMean) {
    if constexpr (!kSum) return false;
    if (base_op == Op::kSum) {
      if constexpr (kDType == DType::kInt64) {
        return Int64Sums(f.t, out);
      } else if constexpr (kInteger) {  // int64 answers, exact (RunsPassTakes: at most 512)
        std::memcpy(out, &f.t.int_sum, sizeof(f.t.int_sum));
        return true;
      }
      value = unskipped ? nan : f.total;
    } else {
      const Mask count = skips ? f.valid : f.lengths;
      value = (unskipped | (count == 0)) ? nan : TotalOf(f) / ToLanes(count);
    }
  } else if (base_op == Op::kSumSquares) {
    if constexpr (!kSquares) return false;
    value = unskipped ? nan : AsLanes(f.t.squares);
  } else if (base_op == Op::kMin || base_op == Op::kArgMin || base_op == Op::kMax ||
             base_op == Op::kArgMax) {
    const bool least = base_op == Op::kMin || base_op == Op::kArgMin;
    if (least ? !kMin : !kMax) return false;
    const Lanes extreme =
        kDType == DType::kInt64
            ? reinterpret_cast<Lanes>(AsMask(least ? f.t.int_least : f.t.int_most))
            : AsLanes(least ? f.t.least : f.t.most);
    if (OpReturnsIndex(op)) {
      if constexpr (!kKeep && kDType != DType::kInt64) return false;  // (int64: by the run)
      return IndicesInto<kDType>(f.x, f.bounds, f.base, f.g, f.at, op, f.nans, f.valid, extreme,
                                 out);
    }
    if constexpr (kDType == DType::kInt64) {  // int64 answers, exact
      std::memcpy(out, &extreme, sizeof(extreme));
      return true;
    } else if constexpr (kDType == DType::kInt32) {  // (no NaN, no padding left in the extremes)
      const Int32x8 narrow =
          __builtin_convertvector(__builtin_convertvector(extreme, Mask), Int32x8);
      std::memcpy(out, &narrow, sizeof(narrow));
      return true;
    }
    value = (unskipped | (f.valid == 0)) ? nan : extreme;
    // Of -0 and 0, the first element equal to the extreme is the answer (Finish's first_of);
    // looked for only where an extreme is 0 (a branch a lane cost float16 rows of 16 MIN 9%).
    const Mask zero = value == 0;
    if (_mm512_test_epi64_mask(reinterpret_cast<__m512i>(zero), reinterpret_cast<__m512i>(zero))) {
      alignas(64) double values[kEightRuns];
      std::memcpy(values, &value, sizeof(values));
      for (size_t r = 0; r < kEightRuns; ++r) {
        if (zero[r] == 0) continue;
        if constexpr (kKeep) {
          values[r] =
              ElementOf(f.g + f.at[r], FirstEqual(f.g + f.at[r], f.at[r + 1] - f.at[r], 0.0));
        } else {
          values[r] =
              FirstZeroOf<kDType>(f.x + (f.bounds[r] - f.base), f.bounds[r + 1] - f.bounds[r]);
        }
      }
      std::memcpy(&value, values, sizeof(values));
    }
  } else if (base_op == Op::kVar || base_op == Op::kStd) {
    if constexpr (!kMoments || !kSum) return false;
    const Lanes count = ToLanes(f.valid);
    const Lanes mean = f.valid > 0 ? TotalOf(f) / count : Lanes{};
    const Mask finite = mean - mean == 0;
    if (!f.have_m2) {  // the second pass over the groups, once for VAR and STD
      alignas(64) double means[kEightRuns];
      std::memcpy(means, &mean, sizeof(means));
      f.m2 = Keep(finite, EightM2<kDType, kKeep, kGroups>(f, means));
      f.have_m2 = true;
    }
    const Lanes difference = count - ddof;
    const Lanes divisor = difference < 0 ? Lanes{} : difference;
    const Mask past_count = (skips && !kInteger) ? divisor == 0 : Mask{};
    value = (unskipped | (f.valid == 0) | past_count | ~finite) ? nan : f.m2 / divisor;
    if (base_op == Op::kStd) {
      value = AsLanes(_mm512_mask_sqrt_pd(reinterpret_cast<__m512d>(value), 0xff,
                                          reinterpret_cast<__m512d>(value)));
    }
  } else {  // PROD
    return false;
  }
  constexpr DType kResult = kInteger ? DType::kFloat64 : kDType;  // a float answer's
  if constexpr (kResult == DType::kFloat16 || kResult == DType::kBFloat16) {
    NarrowEight<kResult>(value, out);
  } else if constexpr (kResult == DType::kFloat32) {  // static_cast<float>'s rounding, lane by lane
    typedef float Floats __attribute__((vector_size(kEightRuns * sizeof(float))));
    const Floats narrow = __builtin_convertvector(value, Floats);
    std::memcpy(out, &narrow, sizeof(narrow));
  } else {  // float64
    std::memcpy(out, &value, sizeof(value));
  }
  return true;
}

// Where an op's answers go: run r's at out + r * size.
struct OpAnswers {
  Op op;
  std::byte* out;
  size_t size;
};

// Eight runs reduced once and answered for each of `ops` (their first runs' answers at out);
// false where an op refuses one of them, which the caller leaves to the Stats. kIndices: the
// extremes' indices may be asked for (an arg op), so the groups are kept to find them in.
template <DType kDType, bool kSquares, bool kMin, bool kMax, bool kMoments, bool kSum, bool kOneOp,
          bool kIndices, size_t kGroups>
bool AnswerEight(const typename Element<kDType>::Storage* x, const uint64_t* bounds, uint64_t base,
                 const OpAnswers* ops, size_t count, double ddof, bool refusable, bool& masked) {
  constexpr bool kInteger = IsInteger(kDType);
  Group g[kEightRuns * kMaxGroups];
  size_t at[kEightRuns + 1];
  // Runs of up to 4 whole groups are read again for the moments rather than kept (rows of 16
  // VAR 1.03-1.14x on the H200 host's 16 threads); longer ones keep them (rows of 128 read again:
  // 0.89-0.95x there, 1.2x slower on the dev VM), and so do 16-bit floats' (two conversions a
  // vector read again, on the ports the arithmetic needs: kept, their VAR 1.05-1.17x).
  constexpr bool kReadAgain =
      kGroups > 0 && kGroups <= 4 && !kIndices && sizeof(typename Element<kDType>::Storage) != 2;
  constexpr bool kKeep =
      ((kMin || kMax) && kIndices && kDType != DType::kInt64) || (kMoments && !kReadAgain);
  EightFacts<kDType> f;  // not value-initialized: zeroing its vectors cost rows of 16 MIN 20%
  f.x = x;
  f.bounds = bounds;
  f.base = base;
  f.g = g;
  f.at = at;
  // Runs of whole groups without the NaN masks first: a float's NaN enters the sum (or, without
  // sums, a probe's), so a NaN total (rare; so is one of infinities of both signs) sends the eight
  // runs again with them, and the call's later runs straight to them (`masked`: data that holds
  // NaN paid two passes for every eight runs, rows of 128 MIN 1.65x). The extremes need no masks
  // (a compare with a NaN is false); integers' whole groups hold neither NaN nor padding.
  bool added = false;
  if constexpr (kGroups > 0) {
    if (kInteger || !masked) {
      f.t = AddEightRuns<kDType, kSquares, kMin, kMax, kKeep, kGroups, kSum, true>(x, bounds, base,
                                                                                   g, at);
      added = kInteger || _mm512_cmp_pd_mask(f.t.sum, f.t.sum, _CMP_UNORD_Q) == 0;
      masked = !added;
    }
  }
  if (!added) {
    f.t = AddEightRuns<kDType, kSquares, kMin, kMax, kKeep, kGroups, kSum>(x, bounds, base, g, at);
  }
  f.nan_free = added;
  if constexpr (kGroups > 0) {
    f.lengths = Mask{} + static_cast<int64_t>(kGroups * kLanes);
  } else {
    Mask starts, ends;
    std::memcpy(&starts, bounds, sizeof(starts));
    std::memcpy(&ends, bounds + 1, sizeof(ends));
    f.lengths = ends - starts;
  }
  f.nans = AsMask(f.t.nans) - (((f.lengths + (kLanes - 1)) & ~int64_t{kLanes - 1}) - f.lengths);
  f.valid = f.lengths - f.nans;
  // FloatSum of the run's Stats: sum + sum_lo (float64's lo 0 past an infinite sum, the
  // narrower floats' 0), or the exact int32 sum.
  f.total = Lanes{};
  if constexpr (!kSum) {
  } else if constexpr (kDType == DType::kInt64) {  // AnswerOp's, where MEAN or VAR reads it
  } else if constexpr (kInteger) {
    f.total = ToLanes(AsMask(f.t.int_sum));
  } else if constexpr (kDType == DType::kFloat64) {
    const Lanes sum = AsLanes(f.t.sum);
    f.total = sum + Keep(sum - sum == 0, AsLanes(f.t.sum_lo));
  } else {  // (+ 0, FloatSum's sum + 0: also makes a -0 from AddRunGroups' start +0)
    f.total = AsLanes(f.t.sum) + Lanes{};
  }
  // An op that refuses one of the runs (a NaN form of an arg op over NaN alone) leaves all eight
  // to the Stats before any op writes: the runs not answered stay untouched. (One op refuses
  // before it writes.)
  if (!kOneOp && refusable &&
      _mm512_cmpeq_epi64_mask(reinterpret_cast<__m512i>(f.valid), _mm512_setzero_si512()) != 0) {
    return false;
  }
  // One op's copy knows its count: a loop of unknown count kept the totals in memory (rows of 16
  // MIN 0.85x).
  for (size_t k = 0; k < (kOneOp ? 1 : count); ++k) {
    if (!AnswerOp<kDType, kSquares, kMin, kMax, kMoments, kSum, kKeep, kGroups>(f, ops[k].op, ddof,
                                                                                ops[k].out)) {
      return false;
    }
  }
  return true;
}

template <DType kDType, bool kSquares, bool kMin, bool kMax, bool kMoments, bool kSum, bool kOneOp,
          bool kIndices = true>
size_t AnswerRunsOf(const DirectAnswers& direct, uint64_t first, const std::byte* data,
                    const uint64_t* bounds, uint64_t base, size_t runs) {
  const auto* x = reinterpret_cast<const typename Element<kDType>::Storage*>(data);
  OpAnswers ops[DirectAnswers::kMostOps];
  bool refusable = false;  // an op FinalizeOp refuses over NaN alone (NANARGMIN, NANARGMAX)
  for (size_t k = 0; k < direct.count; ++k) {
    const Op op = direct.ops[k].op;
    const size_t size = DTypeSize(ResultDType(op, kDType));
    ops[k] = {op, direct.ops[k].out + first * size, size};
    refusable |= OpReturnsIndex(op) && OpSkipsNan(op);
  }
  size_t r = 0;
  bool answered = true;
  bool masked = false;  // AnswerEight's: a NaN met, the rest with the masks at once
  for (; r + kEightRuns <= runs; r += kEightRuns) {
    WithGroups(SharedGroups(bounds + r), [&]<size_t kGroups>() {
      answered =
          AnswerEight<kDType, kSquares, kMin, kMax, kMoments, kSum, kOneOp, kIndices, kGroups>(
              x, bounds + r, base, ops, direct.count, direct.ddof, refusable, masked);
    });
    if (!answered) break;
    for (size_t k = 0; k < direct.count; ++k) ops[k].out += kEightRuns * ops[k].size;
  }
  return r;
}

// One op's copy where it is an extreme (MIN, ARGMIN, MAX, ARGMAX, their NAN forms): no sums;
// nullopt for another op. (`args`: AnswerRunsOf's.)
template <DType kDType, typename Args>
std::optional<size_t> AnswerExtremeAlone(Op op, const Args& args) {
  switch (NanFormOf(op)) {
    case Op::kMin:
      return std::apply(AnswerRunsOf<kDType, false, true, false, false, false, true, false>, args);
    case Op::kArgMin:
      return std::apply(AnswerRunsOf<kDType, false, true, false, false, false, true>, args);
    case Op::kMax:
      return std::apply(AnswerRunsOf<kDType, false, false, true, false, false, true, false>, args);
    case Op::kArgMax:
      return std::apply(AnswerRunsOf<kDType, false, false, true, false, false, true>, args);
    default:
      return std::nullopt;
  }
}

#if defined(__AVX512BW__)
// One extreme op over 16-bit floats by their keys (key_runs.h), 32 runs at a time, a group that
// holds a NaN and the rest after it by AnswerExtremeAlone; nullopt for another op.
template <DType kDType>
std::optional<size_t> AnswerExtremeByKeys(const DirectAnswers& direct, uint64_t first,
                                          const std::byte* data, const uint64_t* bounds,
                                          uint64_t base, size_t runs) {
  const Op op = direct.ops[0].op;
  const auto* x = reinterpret_cast<const uint16_t*>(data);
  std::byte* out = direct.ops[0].out + first * DTypeSize(ResultDType(op, kDType));
  const auto eight = [&](size_t from, size_t count) {
    return *AnswerExtremeAlone<kDType>(
        op, std::forward_as_tuple(direct, first + from, data, bounds + from, base, count));
  };
  switch (NanFormOf(op)) {
    case Op::kMin:
      return AnswerKeyRuns<kDType, true, false>(x, bounds, base, runs, out, eight);
    case Op::kArgMin:
      return AnswerKeyRuns<kDType, true, true>(x, bounds, base, runs, out, eight);
    case Op::kMax:
      return AnswerKeyRuns<kDType, false, false>(x, bounds, base, runs, out, eight);
    case Op::kArgMax:
      return AnswerKeyRuns<kDType, false, true>(x, bounds, base, runs, out, eight);
    default:
      return std::nullopt;
  }
}
#endif

// The copy of the pass for `direct`'s ops: one op's own (sums only where it reads them, not an
// extreme's or SUM_SQUARES's); several ops' sums and both extremes, with the moments and the
// squares where an op reads them. int64's: one op but SUM_SQUARES, its extremes exact in int64
// lanes, its SUM up to eight runs one of which wraps (the Stats count it).
template <DType kDType>
size_t AnswerRunsFor(const DirectAnswers& direct, uint64_t first, const std::byte* data,
                     const uint64_t* bounds, uint64_t base, size_t runs) {
  const auto args = std::forward_as_tuple(direct, first, data, bounds, base, runs);
  if (direct.count == 1) {
    if (NanFormOf(direct.ops[0].op) == Op::kProd) {
      if constexpr (IsInteger(kDType)) {
        return std::apply(AnswerIntProducts<kDType>, args);
      } else {
        return std::apply(AnswerProducts<kDType>, args);
      }
    }
#if defined(__AVX512BW__)
    if constexpr (kDType == DType::kFloat16 || kDType == DType::kBFloat16) {
      if (const auto answered =
              AnswerExtremeByKeys<kDType>(direct, first, data, bounds, base, runs))
        return *answered;
    }
#endif
    if (const auto answered = AnswerExtremeAlone<kDType>(direct.ops[0].op, args)) return *answered;
    switch (NanFormOf(direct.ops[0].op)) {
      case Op::kSum:
      case Op::kMean:
        return std::apply(AnswerRunsOf<kDType, false, false, false, false, true, true>, args);
      case Op::kSumSquares:
        if constexpr (kDType == DType::kInt64) {
          return 0;
        } else {
          return std::apply(AnswerRunsOf<kDType, true, false, false, false, false, true>, args);
        }
      case Op::kVar:
      case Op::kStd:
        return std::apply(AnswerRunsOf<kDType, false, false, false, true, true, true, false>, args);
      default:
        return 0;
    }
  }
  if constexpr (kDType == DType::kInt64) {
    return 0;
  } else {
    bool squares = false, moments = false;
    for (size_t k = 0; k < direct.count; ++k) {
      const Op op = NanFormOf(direct.ops[k].op);
      if (op == Op::kProd) return 0;
      squares |= op == Op::kSumSquares;
      moments |= op == Op::kVar || op == Op::kStd;
    }
    if (squares) return std::apply(AnswerRunsOf<kDType, true, true, true, true, true, false>, args);
    if (moments) {
      return std::apply(AnswerRunsOf<kDType, false, true, true, true, true, false>, args);
    }
    return std::apply(AnswerRunsOf<kDType, false, true, true, false, true, false>, args);
  }
}
#endif

}  // namespace

size_t AnswerRuns([[maybe_unused]] DType dtype, [[maybe_unused]] const DirectAnswers& direct,
                  [[maybe_unused]] uint64_t first, [[maybe_unused]] const std::byte* data,
                  [[maybe_unused]] const uint64_t* bounds, [[maybe_unused]] uint64_t base,
                  [[maybe_unused]] size_t runs) {
#if defined(__AVX512F__)
  if (direct.count == 0 || direct.count > DirectAnswers::kMostOps) return 0;
  switch (dtype) {
    case DType::kFloat32:
      return AnswerRunsFor<DType::kFloat32>(direct, first, data, bounds, base, runs);
    case DType::kFloat16:
      return AnswerRunsFor<DType::kFloat16>(direct, first, data, bounds, base, runs);
    case DType::kBFloat16:
      return AnswerRunsFor<DType::kBFloat16>(direct, first, data, bounds, base, runs);
    case DType::kFloat64:
      return AnswerRunsFor<DType::kFloat64>(direct, first, data, bounds, base, runs);
    case DType::kInt32:
      return AnswerRunsFor<DType::kInt32>(direct, first, data, bounds, base, runs);
    case DType::kInt64:
      return AnswerRunsFor<DType::kInt64>(direct, first, data, bounds, base, runs);
  }
#endif
  return 0;  // no vectors of eight float64 lanes here: every run goes by its Stats
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES
