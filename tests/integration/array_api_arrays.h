#pragma once

// The array API's test data (issue 22; docs/array-api.md): the dtypes, float16/bfloat16 decoding
// and rounding written here from the formats' definitions, and arrays as payload bytes (encoded
// values, random and tied data). Like the reference (array_api_reference.h) that reads them,
// nothing here calls the project's code.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

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

}  // namespace gpureduce::testing::array_api
