#include "client/running_reference.h"

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

// Sums of x (or x^2) and |x| over one chunk, in float64 over 8 independent lanes: the lanes
// break the add-latency chain a single long double accumulator had (about 4 ns per element,
// which made --verify the bottleneck of a stream). The error stays far below --verify's
// tolerance: at most about (n / 8) x 2^-53 x sum|x| for a chunk of n, 4e-12 x sum|x| for a
// 1 MiB chunk; the chunks' sums are then added in long double.
struct ChunkSums {
  double sum = 0;      // of x, or x^2
  double abs_sum = 0;  // of |x|, or x^2
};

template <bool kSquare>
ChunkSums SumChunk(absl::Span<const float> chunk) {
  constexpr size_t kLanes = 8;
  double lane_sum[kLanes] = {};
  double lane_abs[kLanes] = {};
  size_t i = 0;
  for (; i + kLanes <= chunk.size(); i += kLanes) {
    for (size_t k = 0; k < kLanes; ++k) {
      const double x = chunk[i + k];
      lane_sum[k] += kSquare ? x * x : x;
      lane_abs[k] += kSquare ? x * x : std::fabs(x);
    }
  }
  for (; i < chunk.size(); ++i) {
    const double x = chunk[i];
    lane_sum[0] += kSquare ? x * x : x;
    lane_abs[0] += kSquare ? x * x : std::fabs(x);
  }
  ChunkSums sums;
  for (size_t k = 0; k < kLanes; ++k) {
    sums.sum += lane_sum[k];
    sums.abs_sum += lane_abs[k];
  }
  return sums;
}

}  // namespace

void RunningReference::Add(absl::Span<const float> chunk) {
  switch (op_) {
    case v1::PROD:
      // Kept in long double element by element: its exponent range outlasts float64's.
      for (const float x : chunk) product_ *= x;
      break;
    case v1::MIN:
    case v1::MAX:
    case v1::ARGMIN:
    case v1::ARGMAX: {
      const bool less = op_ == v1::MIN || op_ == v1::ARGMIN;
      for (size_t i = 0; i < chunk.size() && !saw_nan_; ++i) {
        if (std::isnan(chunk[i])) {
          saw_nan_ = true;
          extreme_ = chunk[i];
          index_ = static_cast<int64_t>(count_ + i);
        } else if (index_ < 0 || (less ? chunk[i] < extreme_ : chunk[i] > extreme_)) {
          extreme_ = chunk[i];
          index_ = static_cast<int64_t>(count_ + i);
        }
      }
      break;
    }
    default: {  // SUM, MEAN, SUM_SQUARES
      const ChunkSums sums =
          op_ == v1::SUM_SQUARES ? SumChunk<true>(chunk) : SumChunk<false>(chunk);
      sum_ += sums.sum;
      abs_sum_ += sums.abs_sum;
    }
  }
  count_ += chunk.size();
}

double RunningReference::value() const {
  switch (op_) {
    case v1::PROD:
      return static_cast<double>(product_);
    case v1::MIN:
    case v1::MAX:
    case v1::ARGMIN:
    case v1::ARGMAX:
      return extreme_;
    case v1::MEAN:
      return static_cast<double>(sum_ / count_);
    default:
      return static_cast<double>(sum_);
  }
}

double RunningReference::scale() const {
  if (op_ == v1::MEAN) return static_cast<double>(abs_sum_ / count_);
  if (op_ == v1::SUM || op_ == v1::SUM_SQUARES) return static_cast<double>(abs_sum_);
  return std::fabs(value());
}

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
    // The exact product's magnitude only grows while no zero has come (|k| >= 1): once out of
    // int64's range it stays out, unless a zero comes.
    if (!int_prod_overflow_) {
      int_prod_exact_ *= k;
      if (int_prod_exact_ > std::numeric_limits<int64_t>::max() ||
          int_prod_exact_ < std::numeric_limits<int64_t>::min()) {
        int_prod_overflow_ = true;
      }
    }
  }
  // The float product, its exponent apart: no partial overflows or underflows.
  if (x == 0) {
    ++zeros_;
  } else if (std::isinf(x)) {
    ++infinities_;
  } else {
    int e = 0;
    prod_mantissa_ *= std::frexp(static_cast<long double>(x), &e);
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

TypedReference::Answer TypedReference::answer() const {
  const Op op = *wire::FromProto(op_);
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
        answer.overflow = int_prod_overflow_ && !saw_zero_;
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
