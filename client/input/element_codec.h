#pragma once

// The payload's elements as bytes and as numbers: little-endian element bytes of every dtype
// decoded to double (or exactly, to int64), and float16 / bfloat16 encoded from a float. Written
// for the client alone, without the server's conversions, so that the client's references can
// catch the server's mistakes.

#include <cstdint>

#include "absl/strings/string_view.h"
#include "common/reduction/dtype.h"

namespace gpureduce::client {

// IEEE binary16 bits -> its exact value.
double HalfToDouble(uint16_t bits);
// bfloat16 bits (the upper half of a float32) -> its exact value.
double BFloat16ToDouble(uint16_t bits);
// The nearest binary16 (ties to even; past its range an infinity; NaN stays NaN).
uint16_t DoubleToHalf(double value);
// The nearest bfloat16 (ties to even; NaN stays a quiet NaN).
uint16_t FloatToBFloat16(float value);

// Element `i` of little-endian `bytes` of `dtype`, as a double (an int64 to the nearest double).
double ElementAsDouble(DType dtype, const char* bytes, uint64_t i);
// Element `i` of an integer dtype, exactly.
int64_t ElementAsInt(DType dtype, const char* bytes, uint64_t i);

}  // namespace gpureduce::client
