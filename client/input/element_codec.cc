#include "client/input/element_codec.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace gpureduce::client {
namespace {

template <typename T>
T Load(const char* bytes, uint64_t i) {
  T value;
  std::memcpy(&value, bytes + i * sizeof(T), sizeof(T));
  return value;
}

}  // namespace

double HalfToDouble(uint16_t bits) {
  const double sign = (bits & 0x8000) != 0 ? -1.0 : 1.0;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  if (exponent == 0x1f) return mantissa != 0 ? std::nan("") : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);  // zero and subnormals
  return sign * std::ldexp(mantissa + 1024, exponent - 25);
}

double BFloat16ToDouble(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

uint16_t DoubleToHalf(double value) {
  const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  if (std::isnan(value)) return 0x7e00;
  double a = std::fabs(value);
  if (a == 0) return sign;
  // Quantum of the binade (or of the subnormals): round a to a multiple of it, ties to even.
  int exponent;
  std::frexp(a, &exponent);  // a = m * 2^exponent, m in [0.5, 1)
  const int quantum_exp = exponent - 1 < -14 ? -24 : exponent - 11;
  const double units = std::nearbyint(std::ldexp(a, -quantum_exp));  // ties to even (FE_TONEAREST)
  a = std::ldexp(units, quantum_exp);
  if (a == 0) return sign;  // below half the smallest subnormal
  if (a > 65504.0) return sign | 0x7c00;
  std::frexp(a, &exponent);
  if (exponent - 1 < -14) return sign | static_cast<uint16_t>(std::ldexp(a, 24));  // subnormal
  const int biased = exponent - 1 + 15;
  const uint16_t mantissa = static_cast<uint16_t>(std::ldexp(a, 11 - exponent) - 1024);
  return sign | static_cast<uint16_t>(biased << 10) | mantissa;
}

uint16_t FloatToBFloat16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x40);
  const uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

double ElementAsDouble(DType dtype, const char* bytes, uint64_t i) {
  switch (dtype) {
    case DType::kFloat16:
      return HalfToDouble(Load<uint16_t>(bytes, i));
    case DType::kBFloat16:
      return BFloat16ToDouble(Load<uint16_t>(bytes, i));
    case DType::kFloat64:
      return Load<double>(bytes, i);
    case DType::kInt32:
      return Load<int32_t>(bytes, i);
    case DType::kInt64:
      return static_cast<double>(Load<int64_t>(bytes, i));
    case DType::kFloat32:
      break;
  }
  return Load<float>(bytes, i);
}

int64_t ElementAsInt(DType dtype, const char* bytes, uint64_t i) {
  return dtype == DType::kInt32 ? Load<int32_t>(bytes, i) : Load<int64_t>(bytes, i);
}

}  // namespace gpureduce::client
