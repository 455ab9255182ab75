#include "common/reduction/answer_encoding.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/status/statusor.h"
#include "common/reduction/op_result.h"
#include "common/reduction/result_encoding.h"
#include "common/reduction/stats_values.h"

namespace gpureduce {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

template <typename T>
void Store(T value, std::byte* out) {
  std::memcpy(out, &value, sizeof(T));  // little-endian, as EncodeResult
}

// FinalizeOp's value of a float answer (before rounding to the result dtype), for the outputs it
// answers without a refusal; false leaves the output to FinalizeOp (an empty one).
template <Op kOp>
inline bool FloatAnswer(const Stats& stats, double ddof, double& value) {
  constexpr Op kBase = NanFormOf(kOp);
  constexpr bool kSkips = OpSkipsNan(kOp);
  if (stats.count == 0) return false;
  const bool nan = !kSkips && stats.nan_count > 0;
  if constexpr (kBase == Op::kSum) {
    value = nan ? kNan : FloatSum(stats);
  } else if constexpr (kBase == Op::kProd) {
    value = nan ? kNan : FloatProd(stats);
  } else if constexpr (kBase == Op::kSumSquares) {
    value = nan ? kNan : stats.sum_squares;
  } else if constexpr (kBase == Op::kMean) {
    const uint64_t n = kSkips ? stats.valid() : stats.count;
    value = nan || n == 0 ? kNan : FloatSum(stats) / static_cast<double>(n);
  } else if constexpr (kBase == Op::kVar || kBase == Op::kStd) {
    const double n = static_cast<double>(stats.valid());
    const double divisor = std::max(n - ddof, 0.0);
    const bool nan_past_count = kSkips && !stats.integer && divisor == 0;
    const bool infinite = !std::isfinite(stats.mean);
    value = nan || n == 0 || nan_past_count || infinite ? kNan : stats.m2 / divisor;
    if constexpr (kBase == Op::kStd) value = std::sqrt(value);
  } else {  // MIN, MAX of floats
    constexpr bool kLess = kBase == Op::kMin;
    const int64_t index = kLess ? stats.min_index : stats.max_index;
    value = nan || index < 0 ? kNan : (kLess ? stats.min : stats.max);
  }
  return true;
}

// An arg op's index; false where FinalizeOp refuses (empty, or all NaN for the NAN forms).
template <Op kOp>
inline bool IndexAnswer(const Stats& stats, int64_t& index) {
  if (stats.count == 0) return false;
  if (!OpSkipsNan(kOp) && stats.nan_count > 0) {
    index = stats.first_nan;
    return true;
  }
  index = NanFormOf(kOp) == Op::kArgMin ? stats.min_index : stats.max_index;
  return index >= 0;
}

// An integer input's SUM, PROD, MIN or MAX, as FinalizeOp's int_value and overflow.
template <Op kOp>
inline bool IntegerAnswer(const Stats& stats, int64_t& value, bool& overflow) {
  constexpr Op kBase = NanFormOf(kOp);
  if (stats.count == 0) return false;
  overflow = false;
  if constexpr (kBase == Op::kSum) {
    value = stats.int_sum;
    overflow = stats.int_sum_wraps != 0;
  } else if constexpr (kBase == Op::kProd) {
    value = static_cast<int64_t>(stats.int_prod);
    overflow = stats.int_prod_leaves_int64();
  } else {
    constexpr bool kLess = kBase == Op::kMin;
    if ((kLess ? stats.min_index : stats.max_index) < 0) return false;
    value = kLess ? stats.int_min : stats.int_max;
  }
  return true;
}

// RoundToDType then EncodeResult for a 16-bit float result: a value in the format's normal range
// rounded by its bits (to nearest, ties to even, as RoundToDType), the others (zero, subnormal,
// past the range) through them.
template <DType kDType>
inline uint16_t NarrowBits(double value) {
  constexpr bool kHalf = kDType == DType::kFloat16;
  constexpr int kMantissa = kHalf ? 10 : 7;  // stored bits
  constexpr int kMinExponent = kHalf ? -14 : -126;
  constexpr int kMaxExponent = kHalf ? 15 : 127;
  if (std::isnan(value)) return kHalf ? 0x7e00 : 0x7fc0;
  const auto bits = std::bit_cast<uint64_t>(value);
  if (const int exponent = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
      exponent >= kMinExponent && exponent <= kMaxExponent) {
    constexpr int kDrop = 52 - kMantissa;
    const uint64_t rounded = (bits + ((uint64_t{1} << (kDrop - 1)) - 1) + ((bits >> kDrop) & 1)) &
                             ~((uint64_t{1} << kDrop) - 1);
    const int rounded_exponent = static_cast<int>((rounded >> 52) & 0x7ff) - 1023;
    if (rounded_exponent <= kMaxExponent) {
      const auto sign = static_cast<uint16_t>((bits >> 63) << 15);
      const auto biased = static_cast<uint16_t>(rounded_exponent - kMinExponent + 1);
      const auto mantissa = static_cast<uint16_t>((rounded >> kDrop) & ((1u << kMantissa) - 1));
      return sign | static_cast<uint16_t>(biased << kMantissa) | mantissa;
    }
  }
  OpResult result;
  result.dtype = kDType;
  result.value = RoundToDType(value, kDType);
  std::byte out[2];
  EncodeResult(result, out);
  uint16_t narrow = 0;
  std::memcpy(&narrow, out, 2);
  return narrow;
}

template <DType kResult>
inline void StoreFloat(double value, std::byte* out) {
  if constexpr (kResult == DType::kFloat32) {
    Store<float>(static_cast<float>(value), out);
  } else if constexpr (kResult == DType::kFloat64) {
    Store<double>(value, out);
  } else {
    Store<uint16_t>(NarrowBits<kResult>(value), out);
  }
}

// Every output through `answer` (bool(const Stats&, std::byte* out, uint64_t& overflows)), or
// through FinalizeOp where it declines.
template <typename AnswerT>
EncodedAnswers Loop(Op op, DType input, double ddof, std::span<const Stats> stats, std::byte* out,
                    AnswerT answer) {
  EncodedAnswers answers;
  const size_t size = DTypeSize(ResultDType(op, input));
  for (size_t i = 0; i < stats.size(); ++i, out += size) {
    if (answer(stats[i], out, answers.overflows)) continue;
    const absl::StatusOr<OpResult> result = FinalizeOp(op, input, ddof, stats[i]);
    if (!result.ok()) {
      answers.status = result.status();
      answers.failed = i;
      return answers;
    }
    answers.overflows += result->overflow ? 1 : 0;
    EncodeResult(*result, out);
  }
  return answers;
}

template <Op kOp, DType kResult>
EncodedAnswers FloatLoop(DType input, double ddof, std::span<const Stats> stats, std::byte* out) {
  return Loop(kOp, input, ddof, stats, out, [ddof](const Stats& s, std::byte* at, uint64_t&) {
    double value;
    if (!FloatAnswer<kOp>(s, ddof, value)) return false;
    StoreFloat<kResult>(value, at);
    return true;
  });
}

template <Op kOp>
EncodedAnswers EncodeOp(DType input, double ddof, std::span<const Stats> stats, std::byte* out) {
  constexpr Op kBase = NanFormOf(kOp);
  if constexpr (OpReturnsIndex(kOp)) {
    return Loop(kOp, input, ddof, stats, out, [](const Stats& s, std::byte* at, uint64_t&) {
      int64_t index;
      if (!IndexAnswer<kOp>(s, index)) return false;
      Store<int64_t>(index, at);
      return true;
    });
  } else {
    constexpr bool kIntegerResult =
        kBase == Op::kSum || kBase == Op::kProd || kBase == Op::kMin || kBase == Op::kMax;
    if (IsInteger(input) && kIntegerResult) {
      const bool narrow = ResultDType(kOp, input) == DType::kInt32;
      return Loop(kOp, input, ddof, stats, out,
                  [narrow](const Stats& s, std::byte* at, uint64_t& overflows) {
                    int64_t value;
                    bool overflow;
                    if (!IntegerAnswer<kOp>(s, value, overflow)) return false;
                    overflows += overflow ? 1 : 0;
                    if (narrow) {
                      Store<int32_t>(static_cast<int32_t>(value), at);
                    } else {
                      Store<int64_t>(value, at);
                    }
                    return true;
                  });
    }
    switch (ResultDType(kOp, input)) {
      case DType::kFloat32:
        return FloatLoop<kOp, DType::kFloat32>(input, ddof, stats, out);
      case DType::kFloat16:
        return FloatLoop<kOp, DType::kFloat16>(input, ddof, stats, out);
      case DType::kBFloat16:
        return FloatLoop<kOp, DType::kBFloat16>(input, ddof, stats, out);
      default:  // float64 (an integer result is above)
        return FloatLoop<kOp, DType::kFloat64>(input, ddof, stats, out);
    }
  }
}

}  // namespace

EncodedAnswers EncodeAnswers(Op op, DType input, double ddof, std::span<const Stats> stats,
                             std::byte* out) {
  switch (op) {
    case Op::kSum:
      return EncodeOp<Op::kSum>(input, ddof, stats, out);
    case Op::kProd:
      return EncodeOp<Op::kProd>(input, ddof, stats, out);
    case Op::kMin:
      return EncodeOp<Op::kMin>(input, ddof, stats, out);
    case Op::kMax:
      return EncodeOp<Op::kMax>(input, ddof, stats, out);
    case Op::kMean:
      return EncodeOp<Op::kMean>(input, ddof, stats, out);
    case Op::kSumSquares:
      return EncodeOp<Op::kSumSquares>(input, ddof, stats, out);
    case Op::kArgMin:
      return EncodeOp<Op::kArgMin>(input, ddof, stats, out);
    case Op::kArgMax:
      return EncodeOp<Op::kArgMax>(input, ddof, stats, out);
    case Op::kNanSum:
      return EncodeOp<Op::kNanSum>(input, ddof, stats, out);
    case Op::kNanProd:
      return EncodeOp<Op::kNanProd>(input, ddof, stats, out);
    case Op::kNanMin:
      return EncodeOp<Op::kNanMin>(input, ddof, stats, out);
    case Op::kNanMax:
      return EncodeOp<Op::kNanMax>(input, ddof, stats, out);
    case Op::kNanMean:
      return EncodeOp<Op::kNanMean>(input, ddof, stats, out);
    case Op::kNanArgMin:
      return EncodeOp<Op::kNanArgMin>(input, ddof, stats, out);
    case Op::kNanArgMax:
      return EncodeOp<Op::kNanArgMax>(input, ddof, stats, out);
    case Op::kVar:
      return EncodeOp<Op::kVar>(input, ddof, stats, out);
    case Op::kStd:
      return EncodeOp<Op::kStd>(input, ddof, stats, out);
    case Op::kNanVar:
      return EncodeOp<Op::kNanVar>(input, ddof, stats, out);
    case Op::kNanStd:
      return EncodeOp<Op::kNanStd>(input, ddof, stats, out);
  }
  // An unknown op: FinalizeOp's refusal for each.
  return Loop(op, input, ddof, stats, out,
              [](const Stats&, std::byte*, uint64_t&) { return false; });
}

}  // namespace gpureduce
