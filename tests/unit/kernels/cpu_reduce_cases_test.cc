// The `cpu` kernel's edge cases, each against NumPy's answer written out or the independent
// reference: ties, integer overflow, float16's limits, VAR/STD far from 0, ddof past the count,
// products whose partials would leave float64's range, all-NaN arg ops.

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "common/reduction/op_name.h"
#include "common/reduction/op_result.h"
#include "gtest/gtest.h"
#include "kernels/reduce.h"
#include "tests/support/random_data.h"
#include "tests/unit/kernels/stats_reference.h"
#include "tests/unit/kernels/typed_array.h"

namespace gpureduce::kernels::cpu {
namespace {

using testing::FromInts;
using testing::FromValues;
using testing::TypedArray;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

class CpuReduceCasesTest : public ::testing::Test {
 protected:
  OpResult Run(Op op, const TypedArray& array, double ddof = 0) {
    const Op ops[] = {op};
    absl::StatusOr<OpResult> result =
        FinalizeOp(op, array.dtype, ddof, Reduce(pool_, {array.dtype, NeedsOf(ops)}, array.bytes));
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : OpResult{};
  }
  std::string Check(Op op, const TypedArray& array, double ddof = 0) {
    const Op ops[] = {op};
    return testing::CheckResult(
        testing::ReferenceOf(op, array, ddof),
        FinalizeOp(op, array.dtype, ddof, Reduce(pool_, {array.dtype, NeedsOf(ops)}, array.bytes)));
  }
  ThreadPool pool_{4};
};

TEST_F(CpuReduceCasesTest, ArgOpsReturnTheFirstOfTiesInEveryDType) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const TypedArray small = FromValues(dtype, std::vector<double>{5, 1, 1, 5, 3});
    EXPECT_EQ(Run(Op::kArgMin, small).index, 1);
    EXPECT_EQ(Run(Op::kArgMax, small).index, 0);
    const TypedArray zeros = FromValues(dtype, std::vector<double>{0.0, -0.0, 0.0});  // all equal
    EXPECT_EQ(Run(Op::kArgMin, zeros).index, 0);
    EXPECT_EQ(Run(Op::kArgMax, zeros).index, 0);
    // Few distinct values over several tasks: every extreme is tied many times.
    std::vector<double> values(3 * kElementsPerTask + 17);
    const uint64_t seed = testing::FreshSeed();
    SCOPED_TRACE(testing::SeedTrace(seed));
    uint64_t state = seed | 1;
    for (double& x : values) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      x = static_cast<double>(static_cast<int>(state >> 61) - 3);  // -3 .. 4
    }
    const TypedArray ties = FromValues(dtype, values);
    for (Op op : {Op::kArgMin, Op::kArgMax, Op::kNanArgMin, Op::kNanArgMax, Op::kMin}) {
      EXPECT_EQ(Check(op, ties), "") << static_cast<int>(op);
    }
    // The same from a request of every op, whose float extremes come from the fused sums pass.
    const Stats all = Reduce(pool_, {dtype, NeedsOf(kAllOps)}, ties.bytes);
    EXPECT_EQ(all.min_index, testing::ReferenceOf(Op::kArgMin, ties, 0).index);
    EXPECT_EQ(all.max_index, testing::ReferenceOf(Op::kArgMax, ties, 0).index);
  }
}

TEST_F(CpuReduceCasesTest, Int64SumWrapsAndSaysSo) {
  OpResult result = Run(Op::kSum, FromInts(DType::kInt64, std::vector<int64_t>{kInt64Max, 1}));
  EXPECT_EQ(result.int_value, kInt64Min);
  EXPECT_TRUE(result.overflow);
  result = Run(Op::kSum, FromInts(DType::kInt64, std::vector<int64_t>{kInt64Min, -1}));
  EXPECT_EQ(result.int_value, kInt64Max);
  EXPECT_TRUE(result.overflow);
  // Wrapping and coming back: the exact sum fits, so no overflow.
  result = Run(Op::kSum, FromInts(DType::kInt64, std::vector<int64_t>{kInt64Max, 1, -1}));
  EXPECT_EQ(result.int_value, kInt64Max);
  EXPECT_FALSE(result.overflow);
  // Across tasks, many times around.
  const std::vector<int64_t> large(3 * kElementsPerTask + 17, kInt64Max - 12345);
  EXPECT_EQ(Check(Op::kSum, FromInts(DType::kInt64, large)), "");
  EXPECT_EQ(Check(Op::kMean, FromInts(DType::kInt64, large)), "");
}

TEST_F(CpuReduceCasesTest, Int32SumIsExactPast2To31) {
  const std::vector<int64_t> values(1000003, std::numeric_limits<int32_t>::max());
  const OpResult result = Run(Op::kSum, FromInts(DType::kInt32, values));
  EXPECT_EQ(result.dtype, DType::kInt64);
  EXPECT_EQ(result.int_value, int64_t{1000003} * std::numeric_limits<int32_t>::max());
  EXPECT_FALSE(result.overflow);
  const std::vector<int64_t> negative(1000003, std::numeric_limits<int32_t>::min());
  EXPECT_EQ(Run(Op::kSum, FromInts(DType::kInt32, negative)).int_value,
            int64_t{1000003} * std::numeric_limits<int32_t>::min());
}

TEST_F(CpuReduceCasesTest, IntegerProductWrapsAndOverflowIsExact) {
  const int64_t two32 = int64_t{1} << 32;
  OpResult result = Run(Op::kProd, FromInts(DType::kInt64, std::vector<int64_t>{two32, two32}));
  EXPECT_EQ(result.int_value, 0);
  EXPECT_TRUE(result.overflow);
  result = Run(Op::kProd, FromInts(DType::kInt64, std::vector<int64_t>{two32, two32, 0}));
  EXPECT_EQ(result.int_value, 0);
  EXPECT_FALSE(result.overflow);
  result = Run(Op::kProd, FromInts(DType::kInt64, std::vector<int64_t>{-(int64_t{1} << 62), 2}));
  EXPECT_EQ(result.int_value, kInt64Min);
  EXPECT_FALSE(result.overflow);
  std::vector<int64_t> threes(40, 3);  // 3^40 > 2^63
  EXPECT_EQ(Check(Op::kProd, FromInts(DType::kInt32, threes)), "");
  threes.resize(39);  // 3^39 < 2^63
  EXPECT_EQ(Check(Op::kProd, FromInts(DType::kInt64, threes)), "");
  EXPECT_FALSE(Run(Op::kProd, FromInts(DType::kInt64, threes)).overflow);
}

// Products through +2^63 (out of range) and back to -2^63 (in), the factors far apart so that
// the pool's tasks split them and MergeStats meets +2^63.
TEST_F(CpuReduceCasesTest, IntegerProductThroughTwoTo63IsTheExactProducts) {
  constexpr int64_t kLeast32 = std::numeric_limits<int32_t>::min();
  const std::vector<std::pair<DType, std::vector<int64_t>>> cases = {
      {DType::kInt64, {kInt64Min, -1, -1}},         {DType::kInt64, {kInt64Min, -1}},
      {DType::kInt64, {-1, kInt64Min, 1, -1}},      {DType::kInt64, {kInt64Min, -1, -1, 2}},
      {DType::kInt32, {kLeast32, kLeast32, 2, -1}}, {DType::kInt32, {kLeast32, kLeast32, 2}},
  };
  for (const auto& [dtype, factors] : cases) {
    for (size_t n : {size_t{5}, size_t{1000003}}) {
      std::vector<int64_t> values(n, 1);
      for (size_t k = 0; k < factors.size(); ++k)
        values[k * (n - 1) / (factors.size() - 1)] = factors[k];
      SCOPED_TRACE(::testing::PrintToString(factors) + " over " + std::to_string(n));
      EXPECT_EQ(Check(Op::kProd, FromInts(dtype, values)), "");
    }
  }
  EXPECT_FALSE(
      Run(Op::kProd, FromInts(DType::kInt64, std::vector<int64_t>{kInt64Min, -1, -1})).overflow);
  EXPECT_TRUE(
      Run(Op::kProd, FromInts(DType::kInt64, std::vector<int64_t>{kInt64Min, -1})).overflow);
}

TEST_F(CpuReduceCasesTest, Float16NearItsLimits) {
  const std::vector<double> largest{65504, 65504, -65504};  // exact: no overflow on the way
  EXPECT_EQ(Run(Op::kSum, FromValues(DType::kFloat16, largest)).value, 65504);
  const std::vector<double> over{65504, 16};  // 65520 rounds (ties to even) to infinity
  EXPECT_EQ(Run(Op::kSum, FromValues(DType::kFloat16, over)).value, kInf);
  const std::vector<double> under{65504, 15};
  EXPECT_EQ(Run(Op::kSum, FromValues(DType::kFloat16, under)).value, 65504);
  EXPECT_EQ(Run(Op::kMean, FromValues(DType::kFloat16, std::vector<double>{65504, 65504})).value,
            65504);
  const double tiny = std::ldexp(1.0, -24);  // the smallest subnormal
  const std::vector<double> subnormals{tiny, 3 * tiny, std::ldexp(1023.0, -24), -tiny};
  const TypedArray sub = FromValues(DType::kFloat16, subnormals);
  EXPECT_EQ(Run(Op::kSum, sub).value, 1026 * tiny);
  EXPECT_EQ(Run(Op::kMin, sub).value, -tiny);
  EXPECT_EQ(Run(Op::kArgMax, sub).index, 2);
  EXPECT_EQ(Run(Op::kProd, sub).value, -0.0);  // underflows in the result dtype only
  for (Op op : kAllOps) EXPECT_EQ(Check(op, sub), "") << static_cast<int>(op);
  // A million values near the limit: sums overflow to infinity, extremes stay exact.
  std::vector<double> near(1000003);
  for (size_t i = 0; i < near.size(); ++i)
    near[i] = (i % 3 == 0 ? -1 : 1) * (65504 - 32.0 * (i % 7));
  const TypedArray limit = FromValues(DType::kFloat16, near);
  for (Op op : kAllOps) EXPECT_EQ(Check(op, limit), "") << static_cast<int>(op);
}

// float16 and bfloat16 extremes alone are found on their bits (extreme_pass.cc): zeros of both
// signs tie, NaN of either sign and infinities count, wherever in a run they fall.
TEST_F(CpuReduceCasesTest, SixteenBitExtremesOnTheirBits) {
  const Op kExtremeOps[] = {Op::kMin,    Op::kMax,    Op::kArgMin,    Op::kArgMax,
                            Op::kNanMin, Op::kNanMax, Op::kNanArgMin, Op::kNanArgMax};
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(DTypeName(dtype));
    for (int layout = 0; layout < 6; ++layout) {
      SCOPED_TRACE(layout);
      std::vector<double> values(2 * TaskElements(dtype) + 1001);
      uint64_t state = seed + static_cast<uint64_t>(layout);
      for (double& x : values) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        x = 1 + static_cast<double>(state >> 61);  // 1 .. 8: no zero, no sign
      }
      const size_t a = 300 + (seed % 97), b = TaskElements(dtype) + 5 + (seed % 89);
      switch (layout) {
        case 0:  // the least is zero, -0 first
          values[a] = -0.0;
          values[b] = 0.0;
          break;
        case 1:  // +0 first
          values[a] = 0.0;
          values[b] = -0.0;
          break;
        case 2:  // the largest magnitudes as negatives, a tie between two of them
          values[a] = -8;
          values[b] = -8;
          break;
        case 3:  // NaN of either sign, behind positives (MIN alone must still see them)
          values[a] = -kNan;
          values[b] = kNan;
          break;
        case 4:  // infinities
          values[a] = -kInf;
          values[b] = kInf;
          break;
        case 5:  // a NaN among a run that also holds a new extreme
          values[a] = kNan;
          values[a + 1] = -kInf;
          break;
      }
      const TypedArray array = FromValues(dtype, values);
      for (Op op : kExtremeOps) EXPECT_EQ(Check(op, array), "") << OpName(op);
      // The same from the fused sums pass (a request of every op compares keys there).
      const Stats all = Reduce(pool_, {dtype, NeedsOf(kAllOps)}, array.bytes);
      for (Op op : kExtremeOps) {
        EXPECT_EQ(
            testing::CheckResult(testing::ReferenceOf(op, array, 0), FinalizeOp(op, dtype, 0, all)),
            "")
            << OpName(op) << " among all ops";
      }
    }
  }
}

// Mean 1e6, standard deviation 1: within 1e-10 of a two-pass float64 reference, before rounding.
TEST_F(CpuReduceCasesTest, VarianceStaysAccurateFarFromZero) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    const uint64_t seed = testing::FreshSeed();
    SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + testing::SeedTrace(seed));
    std::vector<double> values = testing::RandomArray(DType::kFloat64, 1000003, seed).values;
    for (double& x : values) {
      x = 1e6 + std::fmod(x, 2.0) * 1.7;  // fmod of +-[2^-10, 2^11): uniform-ish in (-2, 2)
      if (dtype == DType::kFloat32) x = static_cast<float>(x);
    }
    const TypedArray array = FromValues(dtype, values);
    double mean = 0, m2 = 0;
    for (double x : values) mean += x;
    mean /= static_cast<double>(values.size());
    for (double x : values) m2 += (x - mean) * (x - mean);
    for (double ddof : {0.0, 1.0}) {
      const double var = m2 / (static_cast<double>(values.size()) - ddof);
      EXPECT_NEAR(Run(Op::kVar, array, ddof).unrounded, var, 1e-10 * var);
      EXPECT_NEAR(Run(Op::kNanStd, array, ddof).unrounded, std::sqrt(var), 1e-10 * std::sqrt(var));
    }
  }
}

TEST_F(CpuReduceCasesTest, DdofAtOrPastTheCountAnswersAsNumpy) {
  const TypedArray five = FromValues(DType::kFloat64, std::vector<double>{1, 2, 3, 4, 6});
  EXPECT_EQ(Run(Op::kVar, five, 5).value, kInf);  // m2 / 0
  EXPECT_EQ(Run(Op::kStd, five, 7).value, kInf);  // the divisor stops at 0
  EXPECT_NEAR(Run(Op::kVar, five, 4).value, 14.8, 1e-12);
  const TypedArray one = FromValues(DType::kInt32, std::vector<double>{7});
  EXPECT_TRUE(std::isnan(Run(Op::kVar, one, 1).value));  // 0 / 0
  EXPECT_EQ(Run(Op::kVar, one, 0).value, 0);
  const TypedArray nan_one = FromValues(DType::kFloat32, std::vector<double>{kNan, 3, kNan});
  EXPECT_TRUE(std::isnan(Run(Op::kNanVar, nan_one, 1).value));
  EXPECT_TRUE(std::isnan(Run(Op::kVar, nan_one, 0).value));
  EXPECT_EQ(Run(Op::kNanStd, nan_one, 0).value, 0);
}

TEST_F(CpuReduceCasesTest, ProductsCarryTheirExponentApart) {
  std::vector<double> zero_first(201, 1e30);
  zero_first[0] = 0;
  std::vector<double> zero_last(2001, 2);
  zero_last.back() = 0;
  std::vector<double> back_to_one(2 * 1100, 2);  // 2^1100 * 2^-1100, across the float64 range
  for (size_t i = 1100; i < back_to_one.size(); ++i) back_to_one[i] = 0.5;
  std::vector<double> huge(200, 1e30);
  std::vector<double> tiny(200, 1e-30);
  const std::vector<double> range{1e300, 1e300, 1e-300, 1e-300, std::ldexp(1.0, -1074), 0x1p1023};
  EXPECT_EQ(Run(Op::kProd, FromValues(DType::kFloat64, zero_first)).value, 0);
  EXPECT_EQ(Run(Op::kProd, FromValues(DType::kFloat64, zero_last)).value, 0);
  EXPECT_EQ(Run(Op::kProd, FromValues(DType::kFloat64, back_to_one)).value, 1);
  EXPECT_EQ(Run(Op::kProd, FromValues(DType::kFloat64, huge)).value, kInf);
  EXPECT_EQ(Run(Op::kProd, FromValues(DType::kFloat64, tiny)).value, 0);
  EXPECT_NEAR(Run(Op::kProd, FromValues(DType::kFloat64, range)).value, 0x1p-51, 1e-15 * 0x1p-51);
  EXPECT_TRUE(std::isnan(
      Run(Op::kProd, FromValues(DType::kFloat64, std::vector<double>{kInf, 1e-300, 0})).value));
  // float32 elements, and the same across several tasks.
  for (double& x : zero_first) x = x == 0 ? 0 : static_cast<float>(x);
  EXPECT_EQ(Run(Op::kProd, FromValues(DType::kFloat32, zero_first)).value, 0);
  std::vector<double> long_zero(3 * kElementsPerTask + 17, 2);
  long_zero[kElementsPerTask + 5] = 0;
  EXPECT_EQ(Run(Op::kProd, FromValues(DType::kFloat32, long_zero)).value, 0);
  long_zero[kElementsPerTask + 5] = kInf;
  EXPECT_EQ(Run(Op::kProd, FromValues(DType::kBFloat16, long_zero)).value, kInf);
  EXPECT_EQ(
      Run(Op::kNanProd, FromValues(DType::kFloat16, std::vector<double>{kNan, 2, kNan, 3})).value,
      6);
}

TEST_F(CpuReduceCasesTest, ArgOpsOfAllNan) {
  const TypedArray nans = FromValues(DType::kFloat32, std::vector<double>{kNan, kNan, kNan});
  const Stats stats = Reduce(pool_, {DType::kFloat32, NeedsOf(kAllOps)}, nans.bytes);
  EXPECT_EQ(FinalizeOp(Op::kNanArgMin, DType::kFloat32, 0, stats).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FinalizeOp(Op::kNanArgMax, DType::kFloat32, 0, stats).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FinalizeOp(Op::kArgMin, DType::kFloat32, 0, stats)->index, 0);
  EXPECT_TRUE(std::isnan(FinalizeOp(Op::kNanMax, DType::kFloat32, 0, stats)->value));
  EXPECT_EQ(FinalizeOp(Op::kNanSum, DType::kFloat32, 0, stats)->value, 0);
  EXPECT_EQ(FinalizeOp(Op::kNanProd, DType::kFloat32, 0, stats)->value, 1);
}

}  // namespace
}  // namespace gpureduce::kernels::cpu
