// The client's typed reference (gpureduce-load's and --verify's check of typed results) on
// answers worked out by hand or by an independent two-pass float64 computation: exact integer
// sums past int32 and int64, NumPy's wrapping and the overflow flag, NaN rules of the plain and
// nan forms, first occurrences, var/std with ddof, products that no partial may overflow.

#include "client/typed_reference.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "client/input/element_codec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpureduce::client {
namespace {

using ::testing::HasSubstr;

template <typename T>
std::string Bytes(const std::vector<T>& values) {
  std::string bytes(values.size() * sizeof(T), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <typename T>
TypedReference::Answer AnswerOf(v1::Op op, DType dtype, const std::vector<T>& values,
                                double ddof = 0, size_t piece = 3) {
  TypedReference reference(op, dtype, ddof);
  const std::string bytes = Bytes(values);
  for (size_t at = 0; at < values.size(); at += piece) {
    const size_t n = std::min(piece, values.size() - at);
    reference.AddBytes(absl::string_view(bytes).substr(at * sizeof(T), n * sizeof(T)));
  }
  return reference.answer();
}

TEST(TypedReferenceTest, Int32SumIsAnExactInt64PastTwoToThe31) {
  const std::vector<int32_t> values(5, std::numeric_limits<int32_t>::max());
  const TypedReference::Answer sum = AnswerOf(v1::SUM, DType::kInt32, values);
  EXPECT_EQ(sum.dtype, v1::INT64);
  EXPECT_TRUE(sum.integer);
  EXPECT_EQ(sum.int_value, 5 * int64_t{2147483647});
  EXPECT_FALSE(sum.overflow);
  const TypedReference::Answer mean = AnswerOf(v1::MEAN, DType::kInt32, values);
  EXPECT_EQ(mean.dtype, v1::FLOAT64);
  EXPECT_EQ(mean.value, 2147483647.0);
  EXPECT_EQ(AnswerOf(v1::MAX, DType::kInt32, values).dtype, v1::INT32);
}

TEST(TypedReferenceTest, Int64SumWrapsAsNumPyAndSaysSo) {
  const std::vector<int64_t> values = {std::numeric_limits<int64_t>::max(), 2, -1};
  const TypedReference::Answer sum = AnswerOf(v1::SUM, DType::kInt64, values, 0, 1);
  EXPECT_TRUE(sum.overflow);
  EXPECT_EQ(sum.int_value, std::numeric_limits<int64_t>::min());  // max + 1 wrapped
  // Back in range by the end: no overflow.
  const std::vector<int64_t> back = {std::numeric_limits<int64_t>::max(), 2, -5};
  EXPECT_FALSE(AnswerOf(v1::SUM, DType::kInt64, back).overflow);
  EXPECT_EQ(AnswerOf(v1::SUM, DType::kInt64, back).int_value,
            std::numeric_limits<int64_t>::max() - 3);
}

TEST(TypedReferenceTest, IntegerProductWrapsAndAZeroEndsTheOverflow) {
  const std::vector<int64_t> big = {int64_t{1} << 40, int64_t{1} << 40, 3};
  const TypedReference::Answer product = AnswerOf(v1::PROD, DType::kInt64, big);
  EXPECT_TRUE(product.overflow);
  EXPECT_EQ(product.int_value, 0);  // 3 * 2^80 modulo 2^64
  std::vector<int64_t> zeroed = big;
  zeroed.push_back(0);
  EXPECT_FALSE(AnswerOf(v1::PROD, DType::kInt64, zeroed).overflow);
}

TEST(TypedReferenceTest, IntegerProductThroughTwoTo63ComesBack) {
  constexpr int64_t kLeast = std::numeric_limits<int64_t>::min();
  const std::vector<int64_t> back = {kLeast, -1, -1};  // +2^63 on the way, -2^63 at the end
  EXPECT_FALSE(AnswerOf(v1::PROD, DType::kInt64, back).overflow);
  EXPECT_EQ(AnswerOf(v1::PROD, DType::kInt64, back).int_value, kLeast);
  EXPECT_TRUE(AnswerOf(v1::PROD, DType::kInt64, std::vector<int64_t>{kLeast, -1}).overflow);
  EXPECT_TRUE(AnswerOf(v1::PROD, DType::kInt64, std::vector<int64_t>{kLeast, -1, -1, 2}).overflow);
  EXPECT_TRUE(AnswerOf(v1::PROD, DType::kInt64, std::vector<int64_t>{kLeast, kLeast, -1}).overflow);
  const std::vector<int32_t> narrow = {std::numeric_limits<int32_t>::min(),
                                       std::numeric_limits<int32_t>::min(), 2, -1};
  EXPECT_FALSE(AnswerOf(v1::PROD, DType::kInt32, narrow).overflow);
}

TEST(TypedReferenceTest, NanPropagatesAndTheNanFormsSkipIt) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> values = {3, nan, -7, 5, nan, -7};
  EXPECT_TRUE(std::isnan(AnswerOf(v1::SUM, DType::kFloat64, values).value));
  EXPECT_EQ(AnswerOf(v1::NANSUM, DType::kFloat64, values).value, -6);
  EXPECT_EQ(AnswerOf(v1::NANMEAN, DType::kFloat64, values).value, -1.5);
  EXPECT_EQ(AnswerOf(v1::NANMIN, DType::kFloat64, values).value, -7);
  EXPECT_EQ(AnswerOf(v1::ARGMIN, DType::kFloat64, values).index, 1);     // the first NaN
  EXPECT_EQ(AnswerOf(v1::NANARGMIN, DType::kFloat64, values).index, 2);  // the first -7
  EXPECT_EQ(AnswerOf(v1::NANARGMAX, DType::kFloat64, values).index, 3);
  EXPECT_EQ(AnswerOf(v1::NANARGMAX, DType::kFloat64, values).dtype, v1::INT64);
  EXPECT_EQ(AnswerOf(v1::NANPROD, DType::kFloat64, values).value, 3 * -7 * 5 * -7);
}

TEST(TypedReferenceTest, VarAndStdWithDdofMatchATwoPassReference) {
  std::vector<double> values;
  for (int i = 0; i < 10007; ++i) values.push_back(1e6 + std::sin(i * 0.37));
  double mean = 0;
  for (double x : values) mean += x;
  mean /= values.size();
  double m2 = 0;
  for (double x : values) m2 += (x - mean) * (x - mean);
  for (const double ddof : {0.0, 1.0, 2.5}) {
    const double var = m2 / (values.size() - ddof);
    const TypedReference::Answer got = AnswerOf(v1::VAR, DType::kFloat64, values, ddof, 1000);
    EXPECT_NEAR(got.value, var, 1e-10 * var) << ddof;
    EXPECT_NEAR(AnswerOf(v1::STD, DType::kFloat64, values, ddof).value, std::sqrt(var),
                1e-10 * std::sqrt(var));
  }
  // NumPy's answer past the count: inf (or NaN for 0/0).
  EXPECT_TRUE(std::isinf(AnswerOf(v1::VAR, DType::kFloat64, std::vector<double>{1, 2}, 2).value));
  EXPECT_TRUE(std::isnan(AnswerOf(v1::VAR, DType::kFloat64, std::vector<double>{1}, 1).value));
}

TEST(TypedReferenceTest, FloatProductKeepsItsExponentApart) {
  std::vector<float> values(200, 1e30f);
  values.insert(values.begin(), 0.0f);
  EXPECT_EQ(AnswerOf(v1::PROD, DType::kFloat32, values).value, 0.0);
  std::vector<double> halves(2000, 0.5);  // 2^-2000: no double holds a partial product
  halves.push_back(std::ldexp(1.0, 1000));
  halves.push_back(std::ldexp(1.0, 999));
  EXPECT_EQ(AnswerOf(v1::PROD, DType::kFloat64, halves).value, 0.5);
  EXPECT_TRUE(
      std::isnan(AnswerOf(v1::PROD, DType::kFloat64, std::vector<double>{0, INFINITY, 2}).value));
}

// The sign is counted apart from the mantissa, once: an odd number of negative elements gives a
// negative product (an even number hid a sign applied twice).
TEST(TypedReferenceTest, FloatProductOfAnOddNumberOfNegativesIsNegative) {
  EXPECT_EQ(AnswerOf(v1::PROD, DType::kFloat64, std::vector<double>{-2.5}).value, -2.5);
  EXPECT_EQ(AnswerOf(v1::PROD, DType::kFloat64, std::vector<double>{3, -7, 5}).value, -105);
  EXPECT_EQ(AnswerOf(v1::PROD, DType::kFloat32, std::vector<float>{-1, -2, -3, 0.5f}).value, -3);
  EXPECT_EQ(AnswerOf(v1::PROD, DType::kFloat64, std::vector<double>{-1, -2}).value, 2);
  EXPECT_EQ(AnswerOf(v1::PROD, DType::kFloat64, std::vector<double>{-0.0, 4}).value, 0.0);
  EXPECT_TRUE(
      std::signbit(AnswerOf(v1::PROD, DType::kFloat64, std::vector<double>{-0.0, 4}).value));
}

TEST(TypedReferenceTest, Float16And16BitBFloatElementsAreDecoded) {
  const std::vector<uint16_t> half = {DoubleToHalf(1.5), DoubleToHalf(-0.25), DoubleToHalf(65504)};
  const TypedReference::Answer sum = AnswerOf(v1::SUM, DType::kFloat16, half);
  EXPECT_EQ(sum.dtype, v1::FLOAT16);
  EXPECT_EQ(sum.value, 65505.25);  // unrounded: float16 would round it
  const std::vector<uint16_t> bf = {FloatToBFloat16(2.0f), FloatToBFloat16(-3.0f)};
  EXPECT_EQ(AnswerOf(v1::ARGMIN, DType::kBFloat16, bf).index, 1);
  EXPECT_EQ(AnswerOf(v1::MEAN, DType::kBFloat16, bf).value, -0.5);
}

v1::OpResult Result(v1::Op op, v1::DType dtype, double value, int64_t int_value = 0,
                    int64_t index = -1, bool overflow = false) {
  v1::OpResult result;
  result.set_op(op);
  result.set_dtype(dtype);
  result.set_value(value);
  result.set_int_value(int_value);
  result.set_index(index);
  result.set_overflow(overflow);
  return result;
}

TEST(CheckOpResultTest, IntegersExactFloatsWithinToleranceOrAnUlp) {
  const std::vector<int32_t> ints(3, 2000000000);
  const TypedReference::Answer sum = AnswerOf(v1::SUM, DType::kInt32, ints);
  EXPECT_EQ(CheckOpResult(Result(v1::SUM, v1::INT64, 6e9, 6000000000), v1::SUM, sum, 1e-9), "");
  EXPECT_THAT(CheckOpResult(Result(v1::SUM, v1::INT64, 6e9, 6000000001), v1::SUM, sum, 1e-9),
              HasSubstr("6000000001, expected 6000000000"));
  EXPECT_THAT(CheckOpResult(Result(v1::SUM, v1::FLOAT64, 6e9), v1::SUM, sum, 1e-9),
              HasSubstr("result dtype FLOAT64, expected INT64"));

  const std::vector<uint16_t> half = {DoubleToHalf(1.5), DoubleToHalf(65504)};
  const TypedReference::Answer h = AnswerOf(v1::SUM, DType::kFloat16, half);
  EXPECT_EQ(CheckOpResult(Result(v1::SUM, v1::FLOAT16, INFINITY), v1::SUM, h, 1e-9), "");
  const std::vector<uint16_t> small = {DoubleToHalf(0.1), DoubleToHalf(0.2)};
  const TypedReference::Answer s = AnswerOf(v1::SUM, DType::kFloat16, small);
  const double rounded = HalfToDouble(DoubleToHalf(s.value));
  EXPECT_EQ(CheckOpResult(Result(v1::SUM, v1::FLOAT16, rounded), v1::SUM, s, 1e-9), "");
  EXPECT_THAT(CheckOpResult(Result(v1::SUM, v1::FLOAT16, rounded + 0.01), v1::SUM, s, 1e-9),
              HasSubstr("sum: "));

  const std::vector<double> values = {1, -4, -4};
  const TypedReference::Answer arg = AnswerOf(v1::ARGMIN, DType::kFloat64, values);
  EXPECT_EQ(CheckOpResult(Result(v1::ARGMIN, v1::INT64, -4, 1, 1), v1::ARGMIN, arg, 0), "");
  EXPECT_THAT(CheckOpResult(Result(v1::ARGMIN, v1::INT64, -4, 2, 2), v1::ARGMIN, arg, 0),
              HasSubstr("index 2, expected 1"));
}

}  // namespace
}  // namespace gpureduce::client
