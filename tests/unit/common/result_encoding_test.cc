// EncodeResult: an answer as its result dtype's little-endian bytes, checked against bit patterns
// written out from the formats' definitions.

#include "common/reduction/result_encoding.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "gtest/gtest.h"

namespace gpureduce {
namespace {

uint16_t Bits16(DType dtype, double value) {
  OpResult result;
  result.dtype = dtype;
  result.value = value;
  std::byte out[2];
  EncodeResult(result, out);
  uint16_t bits = 0;
  std::memcpy(&bits, out, 2);
  return bits;
}

TEST(EncodeResult, HalfAndBFloat16Bits) {
  EXPECT_EQ(Bits16(DType::kFloat16, 1.0), 0x3c00);
  EXPECT_EQ(Bits16(DType::kFloat16, -2.5), 0xc100);
  EXPECT_EQ(Bits16(DType::kFloat16, 65504.0), 0x7bff);
  EXPECT_EQ(Bits16(DType::kFloat16, 0x1p-24), 0x0001);  // the least subnormal
  EXPECT_EQ(Bits16(DType::kFloat16, 0x1p-14), 0x0400);  // the least normal
  EXPECT_EQ(Bits16(DType::kFloat16, -0.0), 0x8000);
  EXPECT_EQ(Bits16(DType::kFloat16, -HUGE_VAL), 0xfc00);
  EXPECT_EQ(Bits16(DType::kFloat16, NAN) & 0x7e00, 0x7e00);
  EXPECT_EQ(Bits16(DType::kBFloat16, 1.0), 0x3f80);
  EXPECT_EQ(Bits16(DType::kBFloat16, -0x1.02p-3), 0xbe01);
  EXPECT_EQ(Bits16(DType::kBFloat16, NAN) & 0x7fc0, 0x7fc0);
}

TEST(EncodeResult, IntegersAndIndices) {
  OpResult sum;
  sum.op = Op::kSum;
  sum.dtype = DType::kInt64;
  sum.int_value = -5000000000;
  int64_t wide = 0;
  std::byte out[8];
  EncodeResult(sum, out);
  std::memcpy(&wide, out, 8);
  EXPECT_EQ(wide, -5000000000);
  OpResult min;
  min.op = Op::kMin;
  min.dtype = DType::kInt32;
  min.int_value = -7;
  int32_t narrow = 0;
  EncodeResult(min, out);
  std::memcpy(&narrow, out, 4);
  EXPECT_EQ(narrow, -7);
  OpResult arg;
  arg.op = Op::kArgMax;
  arg.dtype = DType::kInt64;
  arg.int_value = 41;
  arg.index = 41;
  EncodeResult(arg, out);
  std::memcpy(&wide, out, 8);
  EXPECT_EQ(wide, 41);
}

}  // namespace
}  // namespace gpureduce
