#pragma once

// Test inputs of every dtype: the little-endian bytes a kernel reads beside each element's exact
// value, decoded here with ldexp from the format's definition (not with the kernels' loads), so a
// shared conversion bug cannot hide.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/reduction/dtype.h"

namespace gpureduce::testing {

struct TypedArray {
  DType dtype = DType::kFloat32;
  std::vector<std::byte> bytes;
  std::vector<double> values;  // each element's exact value (an integer's nearest double)
  std::vector<int64_t> ints;   // integer dtypes: each element

  size_t size() const { return values.size(); }
  // Element i becomes `value`, which the dtype must represent exactly (NaN and +-inf for floats).
  void Set(size_t i, double value);
  void SetInt(size_t i, int64_t value);
};

// binary16 and bfloat16 bits to their value, from the formats' definitions.
double DecodeHalf(uint16_t bits);
double DecodeBFloat16(uint16_t bits);

// n elements of mixed sign and magnitude: floats +-(1 + k/2^p) * 2^e with all p mantissa bits
// random and e in [-10, 10] ([-10, 4] for float16, whose sums must stay under 65504);
// integers uniform over the dtype's whole range.
TypedArray RandomArray(DType dtype, size_t n, uint64_t seed);

// The given values (each exactly representable) or integers as an array of `dtype`.
TypedArray FromValues(DType dtype, std::span<const double> values);
TypedArray FromInts(DType dtype, std::span<const int64_t> values);

}  // namespace gpureduce::testing
