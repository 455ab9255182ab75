#pragma once

// The stats kernel suite's inputs and answers (stats_kernel_test.cc): arrays of every dtype as
// bytes and values, and an independent reference written here (long double and 128-bit integer
// loops over the decoded values) that FinalizeOp's result of each op is checked against.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/reduction/dtype.h"
#include "common/reduction/op.h"
#include "common/reduction/op_result.h"
#include "common/reduction/stats.h"

namespace gpureduce::kernels::stats_kernel_test {

__extension__ using Int128 = __int128;
inline constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// An array of one dtype: its little-endian bytes and each element's value.
struct Sample {
  DType dtype = DType::kFloat32;
  std::vector<std::byte> bytes;
  std::vector<double> values;  // floats (NaN included)
  std::vector<int64_t> ints;   // integers
  size_t size() const { return IsInteger(dtype) ? ints.size() : values.size(); }
};

inline double HalfValue(uint16_t bits) {
  const int e = (bits >> 10) & 31;
  const unsigned m = bits & 1023;
  double v = e == 0    ? std::ldexp(double(m), -24)
             : e == 31 ? (m == 0 ? kInf : kNan)
                       : std::ldexp(double(1024 + m), e - 25);
  return (bits & 0x8000) ? -v : v;
}
inline double BFloat16Value(uint16_t bits) {
  const uint32_t word = uint32_t{bits} << 16;
  float f;
  std::memcpy(&f, &word, 4);
  return f;
}

// Appends one float element of `dtype` nearest to (or exactly) `value`; records what was stored.
inline void PushFloat(Sample& s, double value) {
  switch (s.dtype) {
    case DType::kFloat32: {
      const float f = static_cast<float>(value);
      s.values.push_back(f);
      const auto* p = reinterpret_cast<const std::byte*>(&f);
      s.bytes.insert(s.bytes.end(), p, p + 4);
      return;
    }
    case DType::kFloat64: {
      s.values.push_back(value);
      const auto* p = reinterpret_cast<const std::byte*>(&value);
      s.bytes.insert(s.bytes.end(), p, p + 8);
      return;
    }
    case DType::kFloat16:
    case DType::kBFloat16: {
      uint16_t bits;
      if (s.dtype == DType::kBFloat16) {
        const float f = static_cast<float>(value);
        uint32_t word;
        std::memcpy(&word, &f, 4);
        bits = static_cast<uint16_t>(word >> 16);  // truncation: still a bfloat16 value
        if (std::isnan(value)) bits = 0x7fc0;
        s.values.push_back(BFloat16Value(bits));
      } else {
        // Nearest float16 by search over the bit patterns' order (values here are modest).
        if (std::isnan(value)) {
          bits = 0x7e00;
        } else {
          const bool negative = std::signbit(value);
          const double a = std::fabs(value);
          uint16_t lo = 0, hi = 0x7c00;  // +0 .. +inf
          while (hi - lo > 1) {
            const uint16_t mid = static_cast<uint16_t>((lo + hi) / 2);
            (HalfValue(mid) <= a ? lo : hi) = mid;
          }
          bits = static_cast<uint16_t>((a - HalfValue(lo) <= HalfValue(hi) - a ? lo : hi) |
                                       (negative ? 0x8000 : 0));
        }
        s.values.push_back(HalfValue(bits));
      }
      const auto* p = reinterpret_cast<const std::byte*>(&bits);
      s.bytes.insert(s.bytes.end(), p, p + 2);
      return;
    }
    default:
      break;
  }
}

inline void PushInt(Sample& s, int64_t value) {
  if (s.dtype == DType::kInt32) {
    const auto v = static_cast<int32_t>(value);
    s.ints.push_back(v);
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    s.bytes.insert(s.bytes.end(), p, p + 4);
  } else {
    s.ints.push_back(value);
    const auto* p = reinterpret_cast<const std::byte*>(&value);
    s.bytes.insert(s.bytes.end(), p, p + 8);
  }
}

// Mixed sign and magnitude (+/- m * 2^e, e in [-10, 10]); integers in [-1000, 1000]. PROD's
// arrays: magnitudes within 1e-3 of 1 (floats), mostly +/-1 with a few 2s (integers).
inline Sample MakeSample(DType dtype, size_t n, uint64_t seed, bool for_prod = false) {
  std::mt19937_64 rng(seed);
  Sample s;
  s.dtype = dtype;
  std::uniform_real_distribution<double> mantissa(1.0, 2.0), near(-1e-3, 1e-3);
  std::uniform_int_distribution<int> exponent(-10, 10);
  std::uniform_int_distribution<int64_t> small(-1000, 1000);
  std::uniform_int_distribution<int> unit(0, 99);
  for (size_t i = 0; i < n; ++i) {
    const bool negative = rng() & 1;
    if (IsInteger(dtype)) {
      if (for_prod) {
        const int r = unit(rng);
        PushInt(s, r < 2 ? 2 : (negative ? -1 : 1));
      } else {
        PushInt(s, small(rng));
      }
    } else {
      const double v = for_prod ? 1.0 + near(rng) : std::ldexp(mantissa(rng), exponent(rng));
      PushFloat(s, negative ? -v : v);
    }
  }
  return s;
}

// What the answers must be, from plain loops.
struct Reference {
  uint64_t n = 0, valid = 0;
  int64_t first_nan = -1;
  long double sum = 0, abs_sum = 0, sum_squares = 0, prod = 1, mean = 0, m2 = 0;
  bool has_inf = false;
  double min = 0, max = 0;
  int64_t min_index = -1, max_index = -1;
  Int128 int_sum = 0;
  uint64_t int_prod = 1;
  bool int_prod_overflow = false, int_prod_zero = false;
  int64_t int_min = 0, int_max = 0;
};

inline Reference ComputeReference(const Sample& s) {
  Reference r;
  r.n = s.size();
  if (IsInteger(s.dtype)) {
    // The exact product, kept while its magnitude is at most 2^63 (it only grows but at a 0):
    // +2^63 may come back to -2^63, so only past it is the overflow for good.
    Int128 exact = 1;
    const Int128 least = std::numeric_limits<int64_t>::min();
    for (size_t i = 0; i < s.ints.size(); ++i) {
      const int64_t x = s.ints[i];
      r.int_sum += x;
      r.sum_squares += static_cast<long double>(x) * x;
      r.int_prod *= static_cast<uint64_t>(x);
      if (x == 0) r.int_prod_zero = true;
      if (!r.int_prod_overflow) {
        exact *= x;
        r.int_prod_overflow = exact < least || exact > -least;
      }
      if (r.min_index < 0 || x < r.int_min) r.int_min = x, r.min_index = int64_t(i);
      if (r.max_index < 0 || x > r.int_max) r.int_max = x, r.max_index = int64_t(i);
    }
    r.int_prod_overflow = r.int_prod_overflow || exact == -least;  // +2^63 at the end
    r.valid = r.n;
    r.sum = static_cast<long double>(r.int_sum);
    r.abs_sum = 0;
    for (int64_t x : s.ints) r.abs_sum += std::fabs(static_cast<long double>(x));
  } else {
    for (size_t i = 0; i < s.values.size(); ++i) {
      const double x = s.values[i];
      if (std::isnan(x)) {
        if (r.first_nan < 0) r.first_nan = int64_t(i);
        continue;
      }
      ++r.valid;
      r.has_inf = r.has_inf || std::isinf(x);
      r.sum += x;
      r.abs_sum += std::fabs(x);
      r.sum_squares += static_cast<long double>(x) * x;
      r.prod *= x;
      if (r.min_index < 0 || x < r.min) r.min = x, r.min_index = int64_t(i);
      if (r.max_index < 0 || x > r.max) r.max = x, r.max_index = int64_t(i);
    }
  }
  // Two passes over the non-NaN values: the mean, then the squared deviations from it.
  if (r.valid > 0) {
    r.mean = r.sum / r.valid;
    for (size_t i = 0; i < r.n; ++i) {
      const long double x = IsInteger(s.dtype) ? s.ints[i] : s.values[i];
      if (x != x) continue;
      r.m2 += (x - r.mean) * (x - r.mean);
    }
    if (r.has_inf) r.m2 = kNan;
  }
  return r;
}

// "" when `got` is within `bound` of `want` (relative to `scale`); NaN and inf must match.
inline std::string Near(double got, long double want, long double scale, double bound) {
  const double w = static_cast<double>(want);
  if (std::isnan(w) || std::isinf(w) || std::isnan(got) || std::isinf(got)) {
    if ((std::isnan(w) && std::isnan(got)) || got == w) return "";
    return "got " + std::to_string(got) + ", want " + std::to_string(w);
  }
  const long double error = std::fabs(static_cast<long double>(got) - want);
  if (error <= bound * scale + 1e-300L) return "";
  char text[160];
  std::snprintf(text, sizeof(text), "got %.17g, want %.17Lg (error %.3Lg, bound %.3Lg)", got, want,
                error, bound * scale);
  return text;
}

inline std::string CheckOp(Op op, DType dtype, const Reference& r, double ddof,
                           const Stats& stats) {
  const absl::StatusOr<OpResult> got = FinalizeOp(op, dtype, ddof, stats);
  const Op base = NanFormOf(op);
  const bool integer = IsInteger(dtype);
  const bool nan = !OpSkipsNan(op) && r.first_nan >= 0;
  if (stats.count != r.n) return "count " + std::to_string(stats.count);
  if (OpReturnsIndex(op) && !nan && r.valid == 0) {
    return got.ok() ? "all NaN: expected a refusal" : "";
  }
  if (!got.ok()) return got.status().ToString();
  switch (base) {
    case Op::kSum:
      if (integer) {
        const bool fits = r.int_sum >= INT64_MIN && r.int_sum <= INT64_MAX;
        if (got->int_value != static_cast<int64_t>(static_cast<uint64_t>(r.int_sum)) ||
            got->overflow != !fits) {
          return "int sum " + std::to_string(got->int_value) + " overflow " +
                 std::to_string(got->overflow);
        }
        return "";
      }
      return Near(got->unrounded, nan ? kNan : r.sum, r.abs_sum, 1e-12);
    case Op::kProd:
      if (integer) {
        if (got->int_value != static_cast<int64_t>(r.int_prod) ||
            got->overflow != (r.int_prod_overflow && !r.int_prod_zero)) {
          return "int prod " + std::to_string(got->int_value) + " overflow " +
                 std::to_string(got->overflow);
        }
        return "";
      }
      return Near(got->unrounded, nan ? kNan : r.prod, std::fabs(r.prod),
                  std::max(1e-13, double(r.n) * 0x1p-52));
    case Op::kSumSquares:
      return Near(got->unrounded, nan ? kNan : r.sum_squares, r.sum_squares, 1e-12);
    case Op::kMean: {
      const uint64_t count = OpSkipsNan(op) ? r.valid : r.n;
      if (nan || count == 0) return Near(got->unrounded, kNan, 0, 0);
      return Near(got->unrounded, r.sum / count, r.abs_sum / count, 1e-12);
    }
    case Op::kVar:
    case Op::kStd: {
      if (nan || r.valid == 0) return Near(got->unrounded, kNan, 0, 0);
      const long double divisor = std::max<long double>(r.valid - ddof, 0);
      long double want = r.m2 / divisor;
      if (base == Op::kStd) want = std::sqrt(want);
      return Near(got->unrounded, want, std::fabs(want), 1e-10);
    }
    case Op::kMin:
    case Op::kMax: {
      const bool less = base == Op::kMin;
      if (integer) {
        return got->int_value == (less ? r.int_min : r.int_max)
                   ? ""
                   : "int extreme " + std::to_string(got->int_value);
      }
      if (nan || r.valid == 0) return Near(got->value, kNan, 0, 0);
      return Near(got->value, less ? r.min : r.max, 0, 0);
    }
    case Op::kArgMin:
    case Op::kArgMax: {
      const int64_t want = nan ? r.first_nan : (base == Op::kArgMin ? r.min_index : r.max_index);
      return got->index == want
                 ? ""
                 : "index " + std::to_string(got->index) + ", want " + std::to_string(want);
    }
    default:
      return "unknown op";
  }
}

}  // namespace gpureduce::kernels::stats_kernel_test
