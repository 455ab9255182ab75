#include "tests/unit/kernels/stats_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "common/reduction/op_name.h"

namespace gpureduce::testing {
namespace {

__extension__ using Int128 = __int128;
constexpr long double kNan = std::numeric_limits<long double>::quiet_NaN();

bool IsFloatNan(double x) { return x != x; }

// Largest finite value of a result dtype and the magnitude from which rounding gives infinity.
struct Range {
  long double largest;
  long double overflow;
  int digits;        // significant bits
  int min_exponent;  // of the smallest normal
};

Range RangeOf(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return {65504.0L, 65520.0L, 11, -14};
    case DType::kBFloat16:
      return {ldexpl(255, 120), ldexpl(511, 119), 8, -126};
    case DType::kFloat32:
      return {ldexpl(0xffffff, 104), ldexpl(0x1ffffff, 103), 24, -126};
    default:
      return {std::numeric_limits<double>::max(), ldexpl(0x3fffffffffffffLL, 970), 53, -1022};
  }
}

long double Ulp(long double value, const Range& range) {
  const int exponent =
      std::max(static_cast<int>(std::floor(std::log2(std::fabs(value)))), range.min_exponent);
  return ldexpl(1, exponent - (range.digits - 1));
}

}  // namespace

DType NumpyResultDType(Op op, DType input) {
  const Op base = NanFormOf(op);
  if (base == Op::kArgMin || base == Op::kArgMax) return DType::kInt64;
  if (input == DType::kInt32 || input == DType::kInt64) {
    if (base == Op::kSum || base == Op::kProd) return DType::kInt64;  // numpy.sum(int32) is int64
    if (base == Op::kMin || base == Op::kMax) return input;
    return DType::kFloat64;  // mean, var, std (and the service's sum_squares)
  }
  return input;  // float16 sums, means and variances stay float16 in NumPy
}

Expected ReferenceOf(Op op, const TypedArray& array, double ddof) {
  Expected out;
  out.dtype = NumpyResultDType(op, array.dtype);
  const Op base = NanFormOf(op);
  const bool skip = OpSkipsNan(op);
  const bool integer = IsInteger(array.dtype);
  const size_t n = array.size();
  size_t valid = 0;
  int64_t first_nan = -1;
  for (size_t i = 0; i < n; ++i) {
    if (IsFloatNan(array.values[i])) {
      if (first_nan < 0) first_nan = static_cast<int64_t>(i);
    } else {
      ++valid;
    }
  }
  const bool nan = !skip && first_nan >= 0;
  long double sum = 0, sum_abs = 0;
  Int128 int_sum = 0;
  for (double x : array.values) {
    if (!IsFloatNan(x)) {
      sum += x;
      sum_abs += std::fabs(x);
    }
  }
  const long double values_sum = sum;  // of the elements as float64, as NumPy's var sees them
  if (integer) {                       // exactly: an int64 is no double
    for (int64_t x : array.ints) int_sum += x;
    sum = static_cast<long double>(int_sum);
  }
  const long double sum_rel = array.dtype == DType::kFloat64 ? 1e-13L : 1e-10L;
  const bool empty_ok =
      OpHasIdentity(op) || op == Op::kNanMean || base == Op::kVar || base == Op::kStd;
  if (n == 0 && !empty_ok) {
    out.refused = true;
    return out;
  }
  switch (base) {
    case Op::kSum:
      if (integer) {
        out.integer = true;
        out.int_value = static_cast<int64_t>(static_cast<uint64_t>(int_sum));
        out.overflow = int_sum != out.int_value;
      }
      out.value = nan ? kNan : sum;
      out.tolerance = sum_rel * sum_abs;
      break;
    case Op::kProd: {
      if (integer) {
        uint64_t wrapped = 1;
        Int128 exact = 1;  // saturates at 2^64 in magnitude: past int64 either way
        bool zero = false;
        for (int64_t x : array.ints) {
          wrapped *= static_cast<uint64_t>(x);
          zero |= x == 0;
          if (exact > -(Int128{1} << 64) && exact < (Int128{1} << 64)) exact *= x;
        }
        out.integer = true;
        out.int_value = static_cast<int64_t>(wrapped);
        out.overflow = !zero && (exact > std::numeric_limits<int64_t>::max() ||
                                 exact < std::numeric_limits<int64_t>::min());
      }
      // Mantissa and exponent apart in long double: exact enough and never out of range.
      long double mantissa = 1;
      long int exponent = 0;
      for (double x : array.values) {
        if (IsFloatNan(x)) continue;
        int e = 0;
        mantissa = frexpl(mantissa * x, &e);
        if (std::isfinite(mantissa)) exponent += e;
      }
      const long int clamped = std::clamp<long int>(exponent, -20000, 20000);
      out.value = nan ? kNan : ldexpl(mantissa, static_cast<int>(clamped));
      out.tolerance = 1e-9L * std::fabs(out.value);
      break;
    }
    case Op::kSumSquares: {
      long double squares = 0;
      for (double x : array.values) squares += static_cast<long double>(x) * x;
      out.value = squares;  // NaN if any element is
      out.tolerance = 1e-10L * squares;
      break;
    }
    case Op::kMean: {
      const size_t divisor = skip ? valid : n;
      out.value = nan || divisor == 0 ? kNan : sum / divisor;
      out.tolerance = sum_rel * sum_abs / std::max<size_t>(divisor, 1);
      break;
    }
    case Op::kVar:
    case Op::kStd: {
      if (nan || valid == 0) {
        out.value = kNan;
        break;
      }
      const long double mean = values_sum / valid;
      long double m2 = 0;
      for (double x : array.values) {
        if (!IsFloatNan(x)) m2 += (x - mean) * (x - mean);
      }
      const long double divisor = std::max<long double>(valid - ddof, 0);
      out.value = m2 / divisor;  // inf or NaN where ddof >= the count, as NumPy's
      if (base == Op::kStd) out.value = std::sqrt(out.value);
      out.tolerance = 1e-10L * std::fabs(out.value);
      break;
    }
    default: {  // MIN, MAX, ARGMIN, ARGMAX
      const bool less = base == Op::kMin || base == Op::kArgMin;
      int64_t best = -1;
      for (size_t i = 0; i < n; ++i) {
        if (IsFloatNan(array.values[i])) continue;
        const bool better =
            best < 0 ||
            (integer ? (less ? array.ints[i] < array.ints[best] : array.ints[i] > array.ints[best])
                     : (less ? array.values[i] < array.values[best]
                             : array.values[i] > array.values[best]));
        if (better) best = static_cast<int64_t>(i);
      }
      const bool arg = base == Op::kArgMin || base == Op::kArgMax;
      if (arg && !nan && best < 0) {
        out.refused = true;  // NumPy: "All-NaN slice encountered"
        break;
      }
      if (arg) {
        out.index = nan ? first_nan : best;
        out.integer = true;
        out.int_value = out.index;
        out.value = nan ? kNan : static_cast<long double>(array.values[best]);
        break;
      }
      if (integer) {
        out.integer = true;
        out.int_value = array.ints[best];
      }
      out.value = nan || best < 0 ? kNan : static_cast<long double>(array.values[best]);
      break;
    }
  }
  return out;
}

std::string CheckResult(const Expected& expected, const absl::StatusOr<OpResult>& result) {
  std::ostringstream error;
  error.precision(20);
  if (expected.refused) {
    if (result.ok() || result.status().code() != absl::StatusCode::kInvalidArgument) {
      error << "expected INVALID_ARGUMENT, got " << result.status();
    }
    return error.str();
  }
  if (!result.ok()) return "refused: " + result.status().ToString();
  if (result->dtype != expected.dtype) {
    error << "result dtype " << DTypeName(result->dtype) << ", NumPy's is "
          << DTypeName(expected.dtype) << "; ";
  }
  if (expected.index != result->index) {
    error << "index " << result->index << ", expected " << expected.index << "; ";
  }
  if (expected.integer) {
    if (result->int_value != expected.int_value || result->overflow != expected.overflow) {
      error << "int_value " << result->int_value << " overflow " << result->overflow
            << ", expected " << expected.int_value << " overflow " << expected.overflow << "; ";
    }
    if (IsInteger(expected.dtype)) return error.str();  // value: int_value's double
  }
  const long double want = expected.value;
  const double got = result->value;
  if (std::isnan(want) || std::isinf(want)) {
    const bool same = std::isnan(want) ? std::isnan(got) : got == want;
    if (!same) error << "value " << got << ", expected " << static_cast<double>(want) << "; ";
    return error.str();
  }
  const Range range = RangeOf(expected.dtype);
  const long double magnitude = std::fabs(want);
  if (magnitude - expected.tolerance > range.overflow) {
    if (got != std::copysign(HUGE_VAL, static_cast<double>(want))) {
      error << "value " << got << ", expected it to round to infinity from " << want << "; ";
    }
  } else if (magnitude + expected.tolerance < range.overflow) {
    const long double allowed =
        expected.tolerance +
        (magnitude == 0 ? ldexpl(1, range.min_exponent - range.digits) : Ulp(want, range));
    if (!(std::fabs(got - want) <= allowed)) {
      error << "value " << got << ", expected " << want << " within " << allowed << " (error "
            << std::fabs(got - want) << "); ";
    }
  }  // else too close to the overflow boundary to tell
  return error.str();
}

}  // namespace gpureduce::testing
