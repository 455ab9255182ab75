#include "tests/unit/kernels/typed_array.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>

namespace gpureduce::testing {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// A test asked for a value its dtype cannot hold: a bug in the test, stopped where it is.
[[noreturn]] void Misuse(const std::string& what) {
  std::fprintf(stderr, "typed_array: %s\n", what.c_str());
  std::abort();
}

// The bits of a binary format with `mantissa_bits` stored bits and exponent bias `bias` (and
// 2^exponent_bits - 1 as its all-ones exponent) holding `value`, which it must represent.
uint16_t Encode16(double value, int mantissa_bits, int exponent_bits) {
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const uint16_t sign = std::signbit(value) ? uint16_t(1u << 15) : 0;
  const uint16_t all_ones = uint16_t(((1u << exponent_bits) - 1) << mantissa_bits);
  if (std::isnan(value)) return uint16_t(all_ones | (1u << (mantissa_bits - 1)));
  if (std::isinf(value)) return uint16_t(sign | all_ones);
  const double magnitude = std::fabs(value);
  if (magnitude == 0) return sign;
  const int exponent = std::max(std::ilogb(magnitude), 1 - bias);
  const double scaled = std::ldexp(magnitude, mantissa_bits - exponent);  // an integer
  if (scaled != std::floor(scaled) || exponent > bias) {
    Misuse("value not representable: " + std::to_string(value));
  }
  const uint32_t integer = static_cast<uint32_t>(scaled);
  const bool normal = integer >= (1u << mantissa_bits);
  const uint32_t field = normal ? uint32_t(exponent + bias) : 0u;
  return uint16_t(sign | (field << mantissa_bits) | (integer & ((1u << mantissa_bits) - 1)));
}

double Decode16(uint16_t bits, int mantissa_bits, int exponent_bits) {
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const int field = (bits >> mantissa_bits) & ((1 << exponent_bits) - 1);
  const int mantissa = bits & ((1 << mantissa_bits) - 1);
  double value;
  if (field == (1 << exponent_bits) - 1) {
    value = mantissa != 0 ? kNan : HUGE_VAL;
  } else if (field == 0) {
    value = std::ldexp(mantissa, 1 - bias - mantissa_bits);
  } else {
    value = std::ldexp((1 << mantissa_bits) + mantissa, field - bias - mantissa_bits);
  }
  return (bits & 0x8000) ? -value : value;
}

}  // namespace

double DecodeHalf(uint16_t bits) { return Decode16(bits, 10, 5); }
double DecodeBFloat16(uint16_t bits) { return Decode16(bits, 7, 8); }

void TypedArray::Set(size_t i, double value) {
  std::byte* at = bytes.data() + i * DTypeSize(dtype);
  switch (dtype) {
    case DType::kFloat32: {
      const float f = static_cast<float>(value);
      if (f == f && double{f} != value) Misuse("not a float32");
      std::memcpy(at, &f, 4);
      break;
    }
    case DType::kFloat64:
      std::memcpy(at, &value, 8);
      break;
    case DType::kFloat16:
    case DType::kBFloat16: {
      const bool half = dtype == DType::kFloat16;
      const uint16_t bits = half ? Encode16(value, 10, 5) : Encode16(value, 7, 8);
      std::memcpy(at, &bits, 2);
      if (!std::isnan(value) && (half ? DecodeHalf(bits) : DecodeBFloat16(bits)) != value) {
        Misuse("16-bit encoding does not round-trip");
      }
      break;
    }
    case DType::kInt32:
    case DType::kInt64:
      SetInt(i, static_cast<int64_t>(value));
      return;
  }
  values[i] = value;
}

void TypedArray::SetInt(size_t i, int64_t value) {
  std::byte* at = bytes.data() + i * DTypeSize(dtype);
  if (dtype == DType::kInt32) {
    const int32_t narrow = static_cast<int32_t>(value);
    if (narrow != value) Misuse("not an int32");
    std::memcpy(at, &narrow, 4);
  } else {
    std::memcpy(at, &value, 8);
  }
  ints[i] = value;
  values[i] = static_cast<double>(value);
}

TypedArray FromValues(DType dtype, std::span<const double> values) {
  TypedArray array;
  array.dtype = dtype;
  array.bytes.resize(values.size() * DTypeSize(dtype));
  array.values.resize(values.size());
  if (IsInteger(dtype)) array.ints.resize(values.size());
  for (size_t i = 0; i < values.size(); ++i) array.Set(i, values[i]);
  return array;
}

TypedArray FromInts(DType dtype, std::span<const int64_t> values) {
  TypedArray array;
  array.dtype = dtype;
  array.bytes.resize(values.size() * DTypeSize(dtype));
  array.values.resize(values.size());
  array.ints.resize(values.size());
  for (size_t i = 0; i < values.size(); ++i) array.SetInt(i, values[i]);
  return array;
}

TypedArray RandomArray(DType dtype, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  if (IsInteger(dtype)) {
    std::vector<int64_t> ints(n);
    for (int64_t& x : ints) {
      x = dtype == DType::kInt32 ? static_cast<int32_t>(rng()) : static_cast<int64_t>(rng());
    }
    return FromInts(dtype, ints);
  }
  const int mantissa_bits = dtype == DType::kFloat16    ? 10
                            : dtype == DType::kBFloat16 ? 7
                            : dtype == DType::kFloat32  ? 23
                                                        : 52;
  std::uniform_int_distribution<int> exponent(-10, dtype == DType::kFloat16 ? 4 : 10);
  std::vector<double> values(n);
  for (double& x : values) {
    const uint64_t k = rng() >> (64 - mantissa_bits);
    x = std::ldexp(1.0 + std::ldexp(static_cast<double>(k), -mantissa_bits), exponent(rng));
    if (rng() & 1) x = -x;
  }
  return FromValues(dtype, values);
}

}  // namespace gpureduce::testing
