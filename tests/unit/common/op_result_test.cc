// op_result.h: NumPy's result dtypes, the one rounding to them (ties to even, infinity past the
// range), and FinalizeOp's answers where NumPy answers without reducing (empty input, all NaN).

#include "common/reduction/op_result.h"

#include <cfloat>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "gtest/gtest.h"

namespace gpureduce {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(RoundToDTypeTest, Float16RoundsTiesToEven) {
  EXPECT_EQ(RoundToDType(1 + 0x1p-11, DType::kFloat16), 1.0);  // halfway: 1 is even
  EXPECT_EQ(RoundToDType(1 + 3 * 0x1p-11, DType::kFloat16), 1 + 0x1p-9);
  EXPECT_EQ(RoundToDType(1 + 0x1p-11 + 0x1p-30, DType::kFloat16), 1 + 0x1p-10);  // past half
  EXPECT_EQ(RoundToDType(2049, DType::kFloat16), 2048);
  EXPECT_EQ(RoundToDType(2051, DType::kFloat16), 2052);
  EXPECT_EQ(RoundToDType(-2051, DType::kFloat16), -2052);
  EXPECT_EQ(RoundToDType(0.1, DType::kFloat16), 0.0999755859375);  // numpy.float16(0.1)
}

TEST(RoundToDTypeTest, Float16OverflowsToInfinityAndKeepsSubnormals) {
  EXPECT_EQ(RoundToDType(65504, DType::kFloat16), 65504);
  EXPECT_EQ(RoundToDType(65519.99, DType::kFloat16), 65504);
  EXPECT_EQ(RoundToDType(65520, DType::kFloat16), kInf);  // the tie goes to the even 65536
  EXPECT_EQ(RoundToDType(-1e300, DType::kFloat16), -kInf);
  EXPECT_EQ(RoundToDType(0x1p-24, DType::kFloat16), 0x1p-24);  // smallest subnormal
  EXPECT_EQ(RoundToDType(0x1p-25, DType::kFloat16), 0.0);      // halfway to it: 0 is even
  EXPECT_EQ(RoundToDType(3 * 0x1p-25, DType::kFloat16), 0x1p-23);
  EXPECT_EQ(RoundToDType(1023 * 0x1p-24 + 0x1p-26, DType::kFloat16), 1023 * 0x1p-24);
  EXPECT_TRUE(std::isnan(RoundToDType(NAN, DType::kFloat16)));
  EXPECT_EQ(RoundToDType(-kInf, DType::kFloat16), -kInf);
}

TEST(RoundToDTypeTest, BFloat16RoundsTiesToEvenAndOverflows) {
  EXPECT_EQ(RoundToDType(1 + 0x1p-8, DType::kBFloat16), 1.0);
  EXPECT_EQ(RoundToDType(1 + 3 * 0x1p-8, DType::kBFloat16), 1 + 0x1p-6);
  EXPECT_EQ(RoundToDType(257, DType::kBFloat16), 256);
  EXPECT_EQ(RoundToDType(259, DType::kBFloat16), 260);
  const double largest = 255 * 0x1p120;  // bits 0x7f7f
  EXPECT_EQ(RoundToDType(largest, DType::kBFloat16), largest);
  EXPECT_EQ(RoundToDType(511 * 0x1p119, DType::kBFloat16), kInf);  // the tie above it
  EXPECT_EQ(RoundToDType(FLT_MAX, DType::kBFloat16), kInf);        // as torch rounds it
  EXPECT_EQ(RoundToDType(0x1p-133, DType::kBFloat16), 0x1p-133);   // smallest subnormal
  EXPECT_EQ(RoundToDType(0x1p-134, DType::kBFloat16), 0.0);
}

TEST(RoundToDTypeTest, Float32AndWiderTypes) {
  EXPECT_EQ(RoundToDType(1 + 0x1p-24, DType::kFloat32), 1.0);
  EXPECT_EQ(RoundToDType(1 + 3 * 0x1p-24, DType::kFloat32), 1 + 0x1p-22);
  EXPECT_EQ(RoundToDType(1e39, DType::kFloat32), kInf);
  EXPECT_EQ(RoundToDType(0.1, DType::kFloat64), 0.1);
  EXPECT_EQ(RoundToDType(123456789.0, DType::kInt64), 123456789.0);
}

// NumPy 1.24 on Linux x86-64 (numpy.sum(int32) is int64, the int platform type); bfloat16 as
// PyTorch types it. SUM_SQUARES is the service's (float64 for integers: docs/array-api.md).
TEST(ResultDTypeTest, MatchesNumpy) {
  using D = DType;
  const std::map<Op, std::map<D, D>> table = {
      {Op::kSum,
       {{D::kFloat32, D::kFloat32},
        {D::kFloat16, D::kFloat16},
        {D::kBFloat16, D::kBFloat16},
        {D::kFloat64, D::kFloat64},
        {D::kInt32, D::kInt64},
        {D::kInt64, D::kInt64}}},
      {Op::kProd, {{D::kFloat16, D::kFloat16}, {D::kInt32, D::kInt64}, {D::kInt64, D::kInt64}}},
      {Op::kMin, {{D::kFloat16, D::kFloat16}, {D::kInt32, D::kInt32}, {D::kInt64, D::kInt64}}},
      {Op::kMean,
       {{D::kFloat16, D::kFloat16},
        {D::kFloat32, D::kFloat32},
        {D::kInt32, D::kFloat64},
        {D::kInt64, D::kFloat64}}},
      {Op::kVar,
       {{D::kFloat16, D::kFloat16}, {D::kBFloat16, D::kBFloat16}, {D::kInt32, D::kFloat64}}},
      {Op::kStd, {{D::kFloat32, D::kFloat32}, {D::kInt64, D::kFloat64}}},
      {Op::kSumSquares, {{D::kFloat32, D::kFloat32}, {D::kInt32, D::kFloat64}}},
      {Op::kArgMin, {{D::kFloat16, D::kInt64}, {D::kInt32, D::kInt64}, {D::kFloat64, D::kInt64}}},
  };
  for (const auto& [op, row] : table) {
    for (const auto& [input, result] : row) {
      EXPECT_EQ(ResultDType(op, input), result) << static_cast<int>(op) << " " << int(input);
      // The NAN form of an op is typed as the op.
      const Op nan_form = op == Op::kSum ? Op::kNanSum : op == Op::kMean ? Op::kNanMean : op;
      EXPECT_EQ(ResultDType(nan_form, input), result);
    }
  }
}

TEST(FinalizeOpTest, EmptyInputAnswersOrRefusesAsTheContractSays) {
  const Stats empty;
  EXPECT_EQ(FinalizeOp(Op::kSum, DType::kFloat16, 0, empty)->value, 0);
  EXPECT_EQ(FinalizeOp(Op::kProd, DType::kInt32, 0, empty)->int_value, 1);
  EXPECT_TRUE(std::isnan(FinalizeOp(Op::kNanMean, DType::kFloat32, 0, empty)->value));
  EXPECT_TRUE(std::isnan(FinalizeOp(Op::kVar, DType::kFloat64, 0, empty)->value));
  for (Op op : {Op::kMin, Op::kArgMax, Op::kMean, Op::kNanArgMin}) {
    EXPECT_EQ(FinalizeOp(op, DType::kFloat32, 0, empty).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
}

TEST(FinalizeOpTest, IntegerResultsAreExactAndSayTheyWrapped) {
  Stats stats;
  stats.count = 3;
  stats.integer = true;
  stats.int_sum = std::numeric_limits<int64_t>::min() + 5;
  stats.int_sum_wraps = 1;  // the exact sum is 2^63 + 5
  absl::StatusOr<OpResult> sum = FinalizeOp(Op::kSum, DType::kInt64, 0, stats);
  EXPECT_EQ(sum->int_value, stats.int_sum);
  EXPECT_TRUE(sum->overflow);
  EXPECT_EQ(FinalizeOp(Op::kMean, DType::kInt64, 0, stats)->value, (0x1p63 + 5) / 3);
  stats.int_prod = 0;
  stats.int_prod_overflow = true;
  stats.int_prod_zero = true;  // a factor was 0: the exact product is 0 and fits
  EXPECT_FALSE(FinalizeOp(Op::kProd, DType::kInt32, 0, stats)->overflow);
}

}  // namespace
}  // namespace gpureduce
