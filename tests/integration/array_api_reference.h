#pragma once

// An independent NumPy-semantics reference for the array API (issue 22; docs/array-api.md): every
// dtype x op, computed with sequential loops in long double (x87, 64-bit mantissa) or exact
// __int128 integers, with its own float16/bfloat16 decoding and rounding. Nothing here calls the
// project's kernels, Stats or op_result code, so a bug shared with them cannot hide.
//
// A float answer is checked as "the exact reduction rounded once to the result dtype": the
// reference brackets the exact value by [ref - slack, ref + slack] (slack: the accumulation error
// the contract allows, 0 where the service's float64 accumulation is exact by construction of the
// data), and the answer must lie between that bracket's two ends rounded to the result dtype.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::testing::array_api {

__extension__ using Int128 = __int128;
using LD = long double;

inline const std::vector<v1::DType>& AllDTypes() {
  static const std::vector<v1::DType> all = {v1::FLOAT32, v1::FLOAT16, v1::BFLOAT16,
                                             v1::FLOAT64, v1::INT32,   v1::INT64};
  return all;
}

inline const std::vector<v1::Op>& AllOps() {
  static const std::vector<v1::Op> all = [] {
    std::vector<v1::Op> ops;
    for (int op = v1::SUM; op <= v1::NANSTD; ++op) ops.push_back(static_cast<v1::Op>(op));
    return ops;
  }();
  return all;
}

inline size_t DTypeBytes(v1::DType dtype) {
  switch (dtype) {
    case v1::FLOAT16:
    case v1::BFLOAT16:
      return 2;
    case v1::FLOAT64:
    case v1::INT64:
      return 8;
    default:
      return 4;
  }
}

inline bool IsIntDType(v1::DType dtype) { return dtype == v1::INT32 || dtype == v1::INT64; }

// NumPy's name, as the server's messages spell it.
inline std::string DTypeText(v1::DType dtype) {
  switch (dtype) {
    case v1::FLOAT16:
      return "float16";
    case v1::BFLOAT16:
      return "bfloat16";
    case v1::FLOAT64:
      return "float64";
    case v1::INT32:
      return "int32";
    case v1::INT64:
      return "int64";
    default:
      return "float32";
  }
}

// ---- Decoding and rounding, written here from the formats' definitions.

inline LD DecodeHalf(uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 31, mantissa = h & 1023;
  LD v;
  if (exponent == 31) {
    v = mantissa != 0 ? std::numeric_limits<LD>::quiet_NaN() : std::numeric_limits<LD>::infinity();
  } else if (exponent == 0) {
    v = std::ldexp(static_cast<LD>(mantissa), -24);
  } else {
    v = std::ldexp(static_cast<LD>(1024 + mantissa), exponent - 25);
  }
  return sign ? -v : v;
}

inline LD DecodeBFloat(uint16_t b) {
  const uint32_t bits = uint32_t{b} << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// `value` rounded to nearest-even in a format of `digits` significant bits, normal exponents
// [min_exponent, max_exponent]; past the largest finite value: infinity (IEEE's overflow rule:
// at or beyond the largest value plus half an ulp).
inline LD RoundToFormat(LD value, int digits, int min_exponent, int max_exponent) {
  if (value == 0 || !std::isfinite(value)) return value;
  const int exponent = std::max(std::ilogb(value), min_exponent);
  const LD quantum = std::ldexp(LD{1}, exponent - (digits - 1));
  const LD rounded = std::nearbyint(value / quantum) * quantum;
  const LD largest = std::ldexp(2 - std::ldexp(LD{1}, 1 - digits), max_exponent);
  if (std::fabs(rounded) > largest)
    return std::copysign(std::numeric_limits<LD>::infinity(), value);
  return rounded;
}

// The value rounded once to a float dtype (integers: to float64).
inline double RoundTo(LD value, v1::DType dtype) {
  switch (dtype) {
    case v1::FLOAT32:
      return static_cast<float>(value);
    case v1::FLOAT16:
      return static_cast<double>(RoundToFormat(value, 11, -14, 15));
    case v1::BFLOAT16:
      return static_cast<double>(RoundToFormat(value, 8, -126, 127));
    default:
      return static_cast<double>(value);
  }
}

// ---- Arrays: the payload's bytes and their meaning.

struct Array {
  v1::DType dtype = v1::FLOAT32;
  std::string bytes;
  size_t size() const { return bytes.size() / DTypeBytes(dtype); }

  template <typename T>
  T Raw(size_t i) const {
    T t;
    std::memcpy(&t, bytes.data() + i * sizeof(T), sizeof(T));
    return t;
  }
  LD Float(size_t i) const {
    switch (dtype) {
      case v1::FLOAT16:
        return DecodeHalf(Raw<uint16_t>(i));
      case v1::BFLOAT16:
        return DecodeBFloat(Raw<uint16_t>(i));
      case v1::FLOAT64:
        return Raw<double>(i);
      case v1::INT32:
        return Raw<int32_t>(i);
      case v1::INT64:
        return Raw<int64_t>(i);
      default:
        return Raw<float>(i);
    }
  }
  Int128 Int(size_t i) const {
    return dtype == v1::INT32 ? Int128{Raw<int32_t>(i)} : Int128{Raw<int64_t>(i)};
  }
};

// Encodes `value`, which must be exactly representable in the dtype (NaN and +-inf are).
inline std::string Encode(v1::DType dtype, double value) {
  std::string out(DTypeBytes(dtype), '\0');
  auto put = [&out](auto t) { std::memcpy(out.data(), &t, sizeof(t)); };
  switch (dtype) {
    case v1::FLOAT32:
      put(static_cast<float>(value));
      break;
    case v1::FLOAT64:
      put(value);
      break;
    case v1::INT32:
      put(static_cast<int32_t>(value));
      break;
    case v1::INT64:
      put(static_cast<int64_t>(value));
      break;
    case v1::BFLOAT16: {
      const float f = static_cast<float>(value);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      if (std::isnan(f)) bits = 0x7fc00000u;
      put(static_cast<uint16_t>(bits >> 16));
      break;
    }
    default: {  // FLOAT16
      uint16_t h;
      const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
      const double a = std::fabs(value);
      if (std::isnan(value)) {
        h = 0x7e00;
      } else if (std::isinf(value)) {
        h = sign | 0x7c00;
      } else if (a == 0) {
        h = sign;
      } else if (std::ilogb(a) < -14) {
        h = sign | static_cast<uint16_t>(std::ldexp(a, 24));
      } else {
        const int e = std::ilogb(a);
        h = sign | static_cast<uint16_t>((e + 15) << 10) |
            static_cast<uint16_t>(std::ldexp(a, 10 - e) - 1024);
      }
      put(h);
      break;
    }
  }
  return out;
}

inline Array FromValues(v1::DType dtype, const std::vector<double>& values) {
  Array a{dtype, {}};
  for (double v : values) a.bytes += Encode(dtype, v);
  return a;
}

inline void Set(Array& a, size_t i, double value) {
  const std::string e = Encode(a.dtype, value);
  a.bytes.replace(i * e.size(), e.size(), e);
}

// Mixed sign and magnitude, chosen so that a float64 sum of float16 or bfloat16 elements of up to
// 2^22 of them is exact (their exponents span 2^-6..2^6 and 2^-10..2^10); float32 and float64
// elements are +-m * 2^e with e in [-10, 10] and a full random mantissa; int32 spans its whole
// range (sums pass 2^31), int64 +-2^52.
inline Array RandomArray(v1::DType dtype, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Array a{dtype, std::string(n * DTypeBytes(dtype), '\0')};
  char* p = a.bytes.data();
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = rng();
    const bool negative = (r >> 63) != 0;
    switch (dtype) {
      case v1::FLOAT16: {
        const uint16_t h = static_cast<uint16_t>((negative ? 0x8000 : 0) |
                                                 ((15 - 6 + (r >> 10) % 13) << 10) | (r & 1023));
        std::memcpy(p + 2 * i, &h, 2);
        break;
      }
      case v1::BFLOAT16: {
        const uint16_t b = static_cast<uint16_t>((negative ? 0x8000 : 0) |
                                                 ((127 - 10 + (r >> 7) % 21) << 7) | (r & 127));
        std::memcpy(p + 2 * i, &b, 2);
        break;
      }
      case v1::FLOAT32: {
        const float f = std::ldexp(1.0f + static_cast<float>(r & 0x7fffff) / 0x800000,
                                   static_cast<int>((r >> 23) % 21) - 10);
        const float v = negative ? -f : f;
        std::memcpy(p + 4 * i, &v, 4);
        break;
      }
      case v1::FLOAT64: {
        const double m = 1.0 + static_cast<double>(rng() >> 12) / 4503599627370496.0;
        const double v = (negative ? -1 : 1) * std::ldexp(m, static_cast<int>(r % 21) - 10);
        std::memcpy(p + 8 * i, &v, 8);
        break;
      }
      case v1::INT32: {
        const int32_t v = static_cast<int32_t>(static_cast<uint32_t>(r));
        std::memcpy(p + 4 * i, &v, 4);
        break;
      }
      default: {
        const int64_t v = static_cast<int64_t>(r >> 11) - (int64_t{1} << 52);
        std::memcpy(p + 8 * i, &v, 8);
        break;
      }
    }
  }
  return a;
}

// Values from {-3, ..., 3}: every extreme is tied many times.
inline Array TiesArray(v1::DType dtype, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> values(n);
  for (double& v : values) v = static_cast<double>(static_cast<int>(rng() % 7) - 3);
  return FromValues(dtype, values);
}

// ---- The reference answer.

struct Expected {
  bool refused = false;  // INVALID_ARGUMENT (all-NaN NANARG, empty input without identity)
  v1::DType dtype = v1::FLOAT64;
  bool integer = false;  // an integer result (not an arg op): int_value, overflow
  bool arg = false;
  int64_t int_value = 0;
  bool overflow = false;
  int64_t index = -1;
  bool nan = false;
  double lo = 0, hi = 0;  // a float answer (or an arg op's element) lies in [lo, hi]
};

inline v1::Op BaseOf(v1::Op op) {
  switch (op) {
    case v1::NANSUM:
      return v1::SUM;
    case v1::NANPROD:
      return v1::PROD;
    case v1::NANMIN:
      return v1::MIN;
    case v1::NANMAX:
      return v1::MAX;
    case v1::NANMEAN:
      return v1::MEAN;
    case v1::NANARGMIN:
      return v1::ARGMIN;
    case v1::NANARGMAX:
      return v1::ARGMAX;
    case v1::NANVAR:
      return v1::VAR;
    case v1::NANSTD:
      return v1::STD;
    default:
      return op;
  }
}

inline bool Skips(v1::Op op) { return BaseOf(op) != op; }

inline v1::DType ResultDTypeOf(v1::Op op, v1::DType input) {
  const v1::Op base = BaseOf(op);
  if (base == v1::ARGMIN || base == v1::ARGMAX) return v1::INT64;
  if (!IsIntDType(input)) return input;
  if (base == v1::SUM || base == v1::PROD) return v1::INT64;
  if (base == v1::MIN || base == v1::MAX) return input;
  return v1::FLOAT64;
}

// Brackets `exact +- slack`, rounded to `dtype`.
inline void Bracket(Expected& e, LD exact, LD slack) {
  if (std::isnan(exact)) {
    e.nan = true;
    return;
  }
  if (std::isinf(exact)) slack = 0;
  e.lo = RoundTo(exact - slack, e.dtype);
  e.hi = RoundTo(exact + slack, e.dtype);
}

// Relative accuracy the contract allows VAR and STD (issue 22: 1e-10 of a two-pass reference).
constexpr LD kVarRelative = 1e-10L;

// `exact_small_floats`: the array's float16 or bfloat16 elements are such that a float64 sum of
// them is exact (RandomArray's, TiesArray's, a few values): their float answers must then be
// exactly rounded. Otherwise (any bits, as a fuzzer sends) they get float32's slack.
inline Expected Reference(v1::Op op, const Array& a, double ddof, bool exact_small_floats = true) {
  Expected e;
  const v1::Op base = BaseOf(op);
  const bool skips = Skips(op);
  e.dtype = ResultDTypeOf(op, a.dtype);
  e.arg = base == v1::ARGMIN || base == v1::ARGMAX;
  const size_t n = a.size();
  const bool ints = IsIntDType(a.dtype);
  e.integer = ints && !e.arg && e.dtype != v1::FLOAT64;
  const LD eps = std::ldexp(LD{1}, -53);
  std::vector<LD> decoded(n);
  for (size_t i = 0; i < n; ++i) decoded[i] = a.Float(i);
  auto x = [&decoded](size_t i) { return decoded[i]; };

  // Elements that count (NaN skipped by the NAN forms), and whether a NaN decides the answer.
  std::vector<size_t> valid;
  int64_t first_nan = -1;
  for (size_t i = 0; i < n; ++i) {
    if (!ints && std::isnan(x(i))) {
      if (first_nan < 0) first_nan = static_cast<int64_t>(i);
      continue;
    }
    valid.push_back(i);
  }
  const bool nan = first_nan >= 0 && !skips;
  const bool has_identity = base == v1::SUM || base == v1::PROD;
  if (n == 0 && !has_identity && op != v1::NANMEAN && base != v1::VAR && base != v1::STD) {
    e.refused = true;
    return e;
  }

  if (e.arg) {
    if (nan) {
      e.index = first_nan;
      e.int_value = first_nan;
      e.nan = true;
      return e;
    }
    if (valid.empty()) {
      e.refused = true;  // NANARGMIN/NANARGMAX of all NaN: NumPy raises
      return e;
    }
    size_t best = valid[0];
    for (size_t i : valid) {
      const bool better = base == v1::ARGMIN ? x(i) < x(best) : x(i) > x(best);
      if (better) best = i;
    }
    e.index = static_cast<int64_t>(best);
    e.int_value = e.index;
    e.lo = e.hi = static_cast<double>(x(best));
    return e;
  }

  if (ints) {
    Int128 sum = 0;
    for (size_t i = 0; i < n; ++i) sum += a.Int(i);
    if (base == v1::SUM) {
      e.int_value = static_cast<int64_t>(static_cast<uint64_t>(sum));
      e.overflow =
          sum > std::numeric_limits<int64_t>::max() || sum < std::numeric_limits<int64_t>::min();
      e.lo = e.hi = static_cast<double>(e.int_value);
      return e;
    }
    if (base == v1::PROD) {
      uint64_t wrapped = 1;
      bool zero = false, big = false;
      Int128 exact = 1;
      for (size_t i = 0; i < n; ++i) {
        const Int128 x = a.Int(i);
        wrapped *= static_cast<uint64_t>(static_cast<int64_t>(x));
        if (x == 0) zero = true;
        if (!big && __builtin_mul_overflow(exact, x, &exact)) big = true;
        if (!big && (exact > std::numeric_limits<int64_t>::max() ||
                     exact < std::numeric_limits<int64_t>::min())) {
          big = true;  // |partial| never shrinks again unless an element is 0
        }
      }
      e.int_value = static_cast<int64_t>(wrapped);
      e.overflow = big && !zero;
      e.lo = e.hi = static_cast<double>(e.int_value);
      return e;
    }
    if (base == v1::MIN || base == v1::MAX) {
      Int128 best = a.Int(0);
      for (size_t i = 1; i < n; ++i) {
        best = base == v1::MIN ? std::min(best, a.Int(i)) : std::max(best, a.Int(i));
      }
      e.int_value = static_cast<int64_t>(best);
      e.lo = e.hi = static_cast<double>(e.int_value);
      return e;
    }
    if (base == v1::MEAN) {  // the exact sum rounded to float64, divided: exact to the bit
      if (n == 0) return e.nan = true, e;  // NANMEAN of nothing
      const double m = static_cast<double>(sum) / static_cast<double>(n);
      e.lo = e.hi = m;
      return e;
    }
  }

  // Float reductions (and SUM_SQUARES, VAR, STD of integers) in long double.
  LD sum = 0, sum_abs = 0;
  for (size_t i : valid) {
    sum += x(i);
    sum_abs += std::fabs(x(i));
  }
  const LD count = static_cast<LD>(valid.size());
  const LD nl = static_cast<LD>(n);
  // The slack of a float64 sum of these elements: 0 where it is exact (float16 and bfloat16 data
  // of RandomArray, TiesArray), compensated for float64, plain float64 otherwise.
  LD sum_slack;
  if ((a.dtype == v1::FLOAT16 || a.dtype == v1::BFLOAT16) && exact_small_floats) {
    sum_slack = 0;
  } else if (a.dtype == v1::FLOAT64) {
    sum_slack = 2 * eps * std::fabs(sum) + nl * std::ldexp(LD{1}, -63) * sum_abs;
  } else {
    sum_slack = nl * eps * sum_abs;
  }
  switch (base) {
    case v1::SUM:
      if (nan) return e.nan = true, e;
      Bracket(e, sum, sum_slack);
      return e;
    case v1::PROD: {
      if (nan) return e.nan = true, e;
      // The exact product's sign, zeros and infinities, and its mantissa with the exponent kept
      // apart (no partial product overflows or underflows long double's range).
      bool negative = false, zero = false, infinite = false;
      LD mantissa = 1;
      int64_t exponent = 0;
      for (size_t i : valid) {
        const LD v = x(i);
        negative = negative != std::signbit(v);
        if (v == 0) zero = true;
        if (std::isinf(v)) infinite = true;
        if (v == 0 || std::isinf(v)) continue;
        int e2 = 0;
        mantissa = std::frexp(mantissa * std::fabs(v), &e2);
        exponent += e2;
      }
      if (zero && infinite) return e.nan = true, e;
      LD p;
      if (zero) {
        p = 0;
      } else if (infinite) {
        p = std::numeric_limits<LD>::infinity();
      } else {
        p = std::ldexp(mantissa, static_cast<int>(std::clamp<int64_t>(exponent, -20000, 20000)));
      }
      if (negative) p = -p;
      Bracket(e, p, std::fabs(p) * (nl + 1) * 2 * eps);
      return e;
    }
    case v1::MIN:
    case v1::MAX: {
      if (nan || valid.empty()) return e.nan = true, e;
      LD best = x(valid[0]);
      for (size_t i : valid) {
        const LD v = x(i);
        if (base == v1::MIN ? v < best : v > best) best = v;
      }
      e.lo = e.hi = static_cast<double>(best);
      return e;
    }
    case v1::MEAN: {
      if (nan || valid.empty()) return e.nan = true, e;
      const LD m = sum / count;
      Bracket(e, m, sum_slack / count + 2 * eps * std::fabs(m));
      return e;
    }
    case v1::SUM_SQUARES: {
      if (first_nan >= 0) return e.nan = true, e;  // no NAN form
      LD sq = 0;
      for (size_t i = 0; i < n; ++i) sq += x(i) * x(i);
      Bracket(e, sq, (nl + 1) * eps * sq);
      return e;
    }
    case v1::VAR:
    case v1::STD: {
      if (nan || valid.empty()) return e.nan = true, e;
      const LD mean = sum / count;
      LD m2 = 0;
      for (size_t i : valid) m2 += (x(i) - mean) * (x(i) - mean);
      const LD divisor = std::max(count - static_cast<LD>(ddof), LD{0});
      if (divisor == 0 && skips && !ints) return e.nan = true, e;  // np.nanvar's rule
      LD var = m2 / divisor;  // past the count: inf, or NaN where m2 is 0
      if (std::isnan(m2)) var = m2;
      // Any data (a fuzzer's): float64 moments lose about n * eps * mean^2 / (count - ddof) to
      // cancellation where the mean dwarfs the deviations; the contract's 1e-10 holds for
      // mean 1e6 with deviations of 1, what the tests send.
      LD slack = kVarRelative * std::fabs(var);
      if (!exact_small_floats && std::isfinite(var)) {
        slack += 8 * (nl + 1) * eps * (mean * mean + var) * count / std::max(divisor, LD{1});
      }
      if (base == v1::VAR) {
        Bracket(e, var, slack);
      } else if (std::isnan(var) || std::isinf(var)) {
        Bracket(e, std::sqrt(var), 0);
      } else {
        e.lo = RoundTo(std::sqrt(std::max(var - slack, LD{0})), e.dtype);
        e.hi = RoundTo(std::sqrt(var + slack), e.dtype);
      }
      return e;
    }
    default:
      break;
  }
  e.refused = true;
  return e;
}

inline std::string Exact(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

// "" when `got` is the answer `e` describes, else what differs.
inline std::string Check(const Expected& e, v1::Op op, const v1::OpResult& got) {
  std::string out;
  auto differ = [&out](auto what, auto want, auto have) {
    absl::StrAppend(&out, " ", what, ": want ", want, ", got ", have, ";");
  };
  if (got.op() != op) differ("op", v1::Op_Name(op), v1::Op_Name(got.op()));
  if (got.dtype() != e.dtype) differ("dtype", v1::DType_Name(e.dtype), v1::DType_Name(got.dtype()));
  if (e.arg) {
    if (got.index() != e.index) differ("index", e.index, got.index());
    if (got.int_value() != e.index) differ("int_value", e.index, got.int_value());
  } else if (got.index() != -1) {
    differ("index", -1, got.index());
  }
  if (e.integer) {
    if (got.int_value() != e.int_value) differ("int_value", e.int_value, got.int_value());
    if (got.overflow() != e.overflow) differ("overflow", int{e.overflow}, int{got.overflow()});
  } else if (got.overflow()) {
    differ("overflow", 0, 1);
  }
  if (e.nan) {
    if (!std::isnan(got.value())) differ("value", "NaN", Exact(got.value()));
  } else if (!(got.value() >= e.lo && got.value() <= e.hi)) {
    differ("value",
           e.lo == e.hi ? Exact(e.lo) : absl::StrCat("[", Exact(e.lo), ", ", Exact(e.hi), "]"),
           Exact(got.value()));
  }
  if (!out.empty()) out = absl::StrCat(v1::Op_Name(op), ":", out);
  return out;
}

}  // namespace gpureduce::testing::array_api
