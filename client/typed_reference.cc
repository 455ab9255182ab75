#include "client/typed_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_format.h"
#include "client/input/element_codec.h"
#include "common/reduction/op.h"
#include "common/reduction/op_result.h"
#include "wire/op_mapping.h"

namespace gpureduce::client {
namespace {

__extension__ using Int128 = __int128;

// One unit in the last place of `dtype` at `value` (0 for the integer dtypes and float64).
double Ulp(double value, v1::DType dtype) {
  int digits = 0, min_exponent = 0;
  switch (dtype) {
    case v1::FLOAT16:
      digits = 11, min_exponent = -14;
      break;
    case v1::BFLOAT16:
      digits = 8, min_exponent = -126;
      break;
    case v1::FLOAT32:
    case v1::DTYPE_UNSPECIFIED:
      digits = 24, min_exponent = -126;
      break;
    case v1::FLOAT64:
      digits = 53, min_exponent = -1022;
      break;
    default:
      return 0;
  }
  if (value == 0 || !std::isfinite(value)) return std::ldexp(1.0, min_exponent - digits + 1);
  return std::ldexp(1.0, std::max(std::ilogb(value), min_exponent) - digits + 1);
}

// The largest finite value of a float `dtype`.
double Largest(v1::DType dtype) {
  switch (dtype) {
    case v1::FLOAT16:
      return 65504.0;
    case v1::BFLOAT16:
      return 0x1.fep127;
    case v1::FLOAT64:
      return std::numeric_limits<double>::max();
    default:
      return std::numeric_limits<float>::max();
  }
}

}  // namespace

void TypedReference::AddBytes(absl::string_view bytes) {
  const uint64_t n = bytes.size() / DTypeSize(dtype_);
  const bool integer = IsInteger(dtype_);
  for (uint64_t i = 0; i < n; ++i) {
    const int64_t k = integer ? ElementAsInt(dtype_, bytes.data(), i) : 0;
    AddElement(integer ? static_cast<double>(k) : ElementAsDouble(dtype_, bytes.data(), i), k);
  }
}

void TypedReference::AddElement(double x, int64_t k) {
  const int64_t at = static_cast<int64_t>(count_++);
  if (std::isnan(x)) {
    if (nan_count_++ == 0) first_nan_ = at;
    return;
  }
  // Sums and moments over the valid elements.
  sum_ += x;
  abs_sum_ += std::fabs(x);
  sum_squares_ += static_cast<long double>(x) * x;
  const uint64_t valid = count_ - nan_count_;
  const long double delta = x - mean_;
  mean_ += delta / valid;
  m2_ += delta * (x - mean_);
  if (IsInteger(dtype_)) {
    int_sum_ += k;
    int_prod_ *= static_cast<uint64_t>(k);
    if (k == 0) saw_zero_ = true;
    // The exact product's magnitude only grows while no zero has come (|k| >= 1): once past
    // 2^63 it stays out of int64's range, unless a zero comes. +2^63 itself may come back (a
    // later -1 makes it -2^63), so it is kept (2^63 times an int64 stays inside int128).
    if (!int_prod_overflow_) {
      int_prod_exact_ *= k;
      const Int128 least = std::numeric_limits<int64_t>::min();
      if (int_prod_exact_ < least || int_prod_exact_ > -least) int_prod_overflow_ = true;
    }
  }
  // The float product, its exponent apart: no partial overflows or underflows.
  if (x == 0) {
    ++zeros_;
  } else if (std::isinf(x)) {
    ++infinities_;
  } else {
    int e = 0;
    // The magnitude's mantissa: negative_ alone carries the sign.
    prod_mantissa_ *= std::frexp(std::fabs(static_cast<long double>(x)), &e);
    prod_exponent_ += e;
    int m = 0;
    prod_mantissa_ = std::frexp(prod_mantissa_, &m);
    prod_exponent_ += m;
  }
  if (std::signbit(x)) negative_ = !negative_;
  // Extremes: the first occurrence.
  if (min_index_ < 0 || (IsInteger(dtype_) ? k < int_min_ : x < min_)) {
    min_ = x, int_min_ = k, min_index_ = at;
  }
  if (max_index_ < 0 || (IsInteger(dtype_) ? k > int_max_ : x > max_)) {
    max_ = x, int_max_ = k, max_index_ = at;
  }
}

TypedReference::Answer TypedReference::answer(v1::Op proto_op) const {
  const Op op = *wire::FromProto(proto_op);
  const Op base = NanFormOf(op);
  const bool skips = OpSkipsNan(op);
  const bool nan = !skips && nan_count_ > 0;
  const DType result = ResultDType(op, dtype_);
  const uint64_t valid = count_ - nan_count_;
  const double kNan = std::numeric_limits<double>::quiet_NaN();
  Answer answer;
  answer.dtype = static_cast<v1::DType>(static_cast<int>(result));
  answer.integer = IsInteger(result) && !OpReturnsIndex(op);
  switch (base) {
    case Op::kSum:
      if (answer.integer) {
        answer.int_value = static_cast<int64_t>(static_cast<uint64_t>(int_sum_));
        answer.overflow = int_sum_ > std::numeric_limits<int64_t>::max() ||
                          int_sum_ < std::numeric_limits<int64_t>::min();
        answer.value = static_cast<double>(int_sum_);
      } else {
        answer.value = nan ? kNan : static_cast<double>(sum_);
      }
      answer.scale = static_cast<double>(abs_sum_);
      break;
    case Op::kProd:
      if (answer.integer) {
        answer.int_value = static_cast<int64_t>(int_prod_);
        answer.overflow =
            (int_prod_overflow_ || int_prod_exact_ > std::numeric_limits<int64_t>::max()) &&
            !saw_zero_;
        answer.value = static_cast<double>(answer.int_value);
      } else if (nan || (zeros_ > 0 && infinities_ > 0)) {
        answer.value = kNan;
      } else {
        const double sign = negative_ ? -1.0 : 1.0;
        answer.value =
            zeros_ > 0 ? sign * 0.0
            : infinities_ > 0
                ? sign * HUGE_VAL
                : static_cast<double>(std::ldexp(
                      prod_mantissa_ * sign,
                      static_cast<int>(std::clamp<int64_t>(prod_exponent_, -(1 << 20), 1 << 20))));
      }
      answer.scale = std::fabs(answer.value);
      break;
    case Op::kSumSquares:
      answer.value = nan ? kNan : static_cast<double>(sum_squares_);
      answer.scale = answer.value;
      break;
    case Op::kMean: {
      const uint64_t n = skips ? valid : count_;
      answer.value = nan || n == 0 ? kNan
                     : IsInteger(dtype_)
                         ? static_cast<double>(static_cast<long double>(int_sum_) / n)
                         : static_cast<double>(sum_ / n);
      answer.scale = n == 0 ? 0 : static_cast<double>(abs_sum_ / n);
      break;
    }
    case Op::kVar:
    case Op::kStd: {
      const long double divisor = std::max<long double>(valid - ddof_, 0);
      long double var = nan || valid == 0 ? kNan : m2_ / divisor;
      if (base == Op::kStd) var = std::sqrt(var);
      answer.value = static_cast<double>(var);
      answer.scale = std::fabs(answer.value);
      break;
    }
    default: {  // MIN, MAX, ARGMIN, ARGMAX
      const bool less = base == Op::kMin || base == Op::kArgMin;
      const int64_t index = nan ? first_nan_ : less ? min_index_ : max_index_;
      answer.value = nan || index < 0 ? kNan : less ? min_ : max_;
      if (OpReturnsIndex(op)) {
        answer.index = index;
        answer.int_value = index;
      } else if (answer.integer) {
        answer.int_value = less ? int_min_ : int_max_;
      }
    }
  }
  return answer;
}

std::string CheckOpResult(const v1::OpResult& result, v1::Op op,
                          const TypedReference::Answer& expected, double tolerance) {
  const std::string name = wire::OpName(op);
  if (result.op() != op) {
    return absl::StrFormat("%s: the result is for %s", name, wire::OpName(result.op()));
  }
  if (result.dtype() != expected.dtype) {
    return absl::StrFormat("%s: result dtype %s, expected %s", name, v1::DType_Name(result.dtype()),
                           v1::DType_Name(expected.dtype));
  }
  if (result.index() != expected.index) {
    return absl::StrFormat("%s: index %d, expected %d", name, result.index(), expected.index);
  }
  if (expected.integer || expected.index >= 0) {
    if (result.int_value() != expected.int_value || result.overflow() != expected.overflow) {
      return absl::StrFormat("%s: %d%s, expected %d%s", name, result.int_value(),
                             result.overflow() ? " (overflow)" : "", expected.int_value,
                             expected.overflow ? " (overflow)" : "");
    }
    return "";
  }
  const double got = result.value();
  const double want = expected.value;
  if (std::isnan(want) || std::isnan(got)) {
    return std::isnan(want) && std::isnan(got)
               ? ""
               : absl::StrFormat("%s: %.17g, expected %.17g", name, got, want);
  }
  if (std::isinf(got) && !std::isinf(want) && std::signbit(got) == std::signbit(want) &&
      std::fabs(want) >= Largest(expected.dtype)) {
    return "";  // a finite result past the result dtype's range rounds to an infinity
  }
  if ((std::isinf(want) || std::isinf(got)) && got == want) return "";
  const double error = std::fabs(got - want);
  const double bound = tolerance * expected.scale + Ulp(want, expected.dtype);
  if (error <= bound) return "";
  return absl::StrFormat("%s: %.17g, expected %.17g (error %.3g, allowed %.3g)", name, got, want,
                         error, bound);
}

}  // namespace gpureduce::client
