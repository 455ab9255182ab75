#include "common/reduction/op_result.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/reduction/op_name.h"
#include "common/reduction/stats_values.h"

namespace gpureduce {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// A binary floating-point format: `digits` significant bits, normal exponents from min_exponent
// (of the smallest normal, 2^min_exponent) to max_exponent (of the largest finite value's).
struct FloatFormat {
  int digits;
  int min_exponent;
  int max_exponent;
};

double RoundToFormat(double value, FloatFormat format) {
  if (value == 0.0 || !std::isfinite(value)) return value;
  const int exponent = std::max(std::ilogb(value), format.min_exponent);
  const double quantum = std::ldexp(1.0, exponent - (format.digits - 1));
  const double rounded = std::nearbyint(value / quantum) * quantum;  // ties to even
  const double largest = std::ldexp(2.0 - std::ldexp(1.0, 1 - format.digits), format.max_exponent);
  if (std::fabs(rounded) > largest) return std::copysign(HUGE_VAL, value);
  return rounded;
}

absl::Status Empty(Op op) {
  return absl::InvalidArgumentError(absl::StrCat(
      "empty input: ", OpName(op),
      " has no identity; send at least one element (sum, prod, their nan forms, nanmean, var, "
      "std and their nan forms answer an empty array)"));
}

}  // namespace

DType ResultDType(Op op, DType input) {
  if (OpReturnsIndex(op)) return DType::kInt64;
  const Op base = NanFormOf(op);
  if (!IsInteger(input)) return input;
  switch (base) {
    case Op::kSum:
    case Op::kProd:
      return DType::kInt64;
    case Op::kMin:
    case Op::kMax:
      return input;
    default:  // MEAN, SUM_SQUARES, VAR, STD
      return DType::kFloat64;
  }
}

double RoundToDType(double value, DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return static_cast<double>(static_cast<float>(value));
    case DType::kFloat16:
      return RoundToFormat(value, {11, -14, 15});
    case DType::kBFloat16:
      return RoundToFormat(value, {8, -126, 127});
    default:
      return value;
  }
}

absl::StatusOr<OpResult> FinalizeOp(Op op, DType input, double ddof, const Stats& stats) {
  OpResult result;
  result.op = op;
  result.dtype = ResultDType(op, input);
  result.count = stats.count;
  const Op base = NanFormOf(op);
  const bool skips = OpSkipsNan(op);
  const bool nan = !skips && stats.nan_count > 0;  // the answer is NaN (or the first NaN's index)
  const bool integer_result = IsInteger(result.dtype) && !OpReturnsIndex(op);

  if (stats.count == 0 && !OpHasIdentity(op) &&
      !(op == Op::kNanMean || base == Op::kVar || base == Op::kStd)) {
    return Empty(op);
  }
  double value = 0.0;
  switch (base) {
    case Op::kSum:
      if (integer_result) {
        result.int_value = stats.int_sum;
        result.overflow = stats.int_sum_wraps != 0;
      }
      value = nan ? kNan : FloatSum(stats);
      break;
    case Op::kProd:
      if (integer_result) {
        result.int_value = static_cast<int64_t>(stats.int_prod);
        result.overflow = stats.int_prod_leaves_int64();
      }
      value = nan ? kNan : FloatProd(stats);
      break;
    case Op::kSumSquares:
      value = nan ? kNan : stats.sum_squares;
      break;
    case Op::kMean: {
      const uint64_t n = skips ? stats.valid() : stats.count;
      value = nan || n == 0 ? kNan : FloatSum(stats) / static_cast<double>(n);
      break;
    }
    case Op::kVar:
    case Op::kStd: {
      const double n = static_cast<double>(stats.valid());
      const double divisor = std::max(n - ddof, 0.0);
      // NumPy's: past the count, m2 / 0 (inf, or NaN for m2 = 0); its nanvar of floats answers
      // NaN there instead.
      const bool nan_past_count = skips && !stats.integer && divisor == 0;
      // An infinity among the elements makes the mean infinite (or NaN) and, as in NumPy's
      // x - mean, the deviations NaN.
      const bool infinite = !std::isfinite(stats.mean);
      value = nan || n == 0 || nan_past_count || infinite ? kNan : stats.m2 / divisor;
      if (base == Op::kStd) value = std::sqrt(value);
      break;
    }
    case Op::kMin:
    case Op::kMax:
    case Op::kArgMin:
    case Op::kArgMax: {
      const bool less = base == Op::kMin || base == Op::kArgMin;
      const int64_t index = less ? stats.min_index : stats.max_index;
      if (OpReturnsIndex(op)) {
        if (nan) {
          result.index = stats.first_nan;
          value = kNan;
        } else if (index < 0) {
          return absl::InvalidArgumentError(
              absl::StrCat(OpName(op), ": all ", stats.count,
                           " elements are NaN (NumPy raises 'All-NaN slice "
                           "encountered'); ",
                           OpName(NanFormOf(op)), " answers the first NaN's index"));
        } else {
          result.index = index;
          value = stats.integer ? static_cast<double>(less ? stats.int_min : stats.int_max)
                                : (less ? stats.min : stats.max);
        }
        result.int_value = result.index;
        result.value = value;
        result.unrounded = value;
        return result;
      }
      if (integer_result) result.int_value = less ? stats.int_min : stats.int_max;
      value = nan || index < 0 ? kNan
              : stats.integer  ? static_cast<double>(result.int_value)
                               : (less ? stats.min : stats.max);
      break;
    }
    default:
      return absl::InvalidArgumentError(absl::StrCat("op ", static_cast<int>(op), " is unknown"));
  }
  // An integer SUM's exact value as a double also where int_value wrapped (NumPy's float sum).
  result.unrounded = !integer_result    ? value
                     : base == Op::kSum ? FloatSum(stats)
                                        : static_cast<double>(result.int_value);
  result.value =
      integer_result ? static_cast<double>(result.int_value) : RoundToDType(value, result.dtype);
  return result;
}

}  // namespace gpureduce
