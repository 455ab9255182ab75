// The array API's numeric edges (issue 22, docs/array-api.md) through the real server: integer
// overflow, float16 limits, ddof, stable variance, variance of infinities and exact products.
// Runs on the test backend (the CPU server; "gpu." with GPUREDUCE_TEST_BACKEND=cuda).

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/integration/array_api_fixture.h"
#include "tests/support/random_data.h"

namespace gpureduce::testing::array_api {
namespace {

Array Int64s(const std::vector<int64_t>& values) {
  Array a{v1::INT64, std::string(values.size() * 8, '\0')};
  std::memcpy(a.bytes.data(), values.data(), a.bytes.size());
  return a;
}

// ---- Integers.

TEST_F(ArrayApiTest, IntegerSumsWrapAsNumPyAndSayTheyOverflowed) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  struct Case {
    Array a;
    v1::Op op;
    int64_t want;
    bool overflow;
  };
  const std::vector<Case> cases = {
      {Int64s({max, 1}), v1::SUM, std::numeric_limits<int64_t>::min(), true},
      {Int64s({int64_t{1} << 62, int64_t{1} << 62, int64_t{1} << 62, int64_t{1} << 62}), v1::SUM, 0,
       true},
      {Int64s({max, 1, -1}), v1::SUM, max, false},  // back in range: exact, no overflow
      {Int64s(std::vector<int64_t>(41, 3)), v1::PROD, -420491770248316829, true},
      {Int64s({int64_t{1} << 32, int64_t{1} << 32}), v1::PROD, 0, true},
      {Int64s({int64_t{1} << 32, int64_t{1} << 32, 0}), v1::PROD, 0, false},
      {FromValues(v1::INT32, {2147483647.0, 2147483647.0, 2147483647.0}), v1::SUM, 6442450941,
       false},
      {FromValues(v1::INT32, {65536, 65536}), v1::PROD, 4294967296, false},
  };
  for (const Case& c : cases) {
    for (v1::Op op : {c.op, c.op == v1::SUM ? v1::NANSUM : v1::NANPROD}) {
      const Outcome got = h_->Reduce(c.a, {op});
      ASSERT_TRUE(got.status.ok()) << got.status.error_message();
      const v1::OpResult& r = got.response.results(0);
      EXPECT_EQ(r.int_value(), c.want) << v1::Op_Name(op);
      EXPECT_EQ(r.overflow(), c.overflow) << v1::Op_Name(op);
      EXPECT_EQ(r.dtype(), v1::INT64);
      EXPECT_EQ(r.value(), static_cast<double>(c.want));
      ExpectAnswers(got, {op}, c.a, 0, "overflow case");
    }
  }
  // [2^62] * 4: the mean does not wrap.
  const Array quarter = Int64s(std::vector<int64_t>(4, int64_t{1} << 62));
  const Outcome mean = h_->Reduce(quarter, {v1::MEAN});
  ASSERT_TRUE(mean.status.ok());
  EXPECT_EQ(mean.response.results(0).value(), std::ldexp(1.0, 62));
  // Random full-range int64: sums wrap often.
  std::mt19937_64 rng(seed_);
  std::vector<int64_t> wide(kMillion);
  for (int64_t& v : wide) v = static_cast<int64_t>(rng());
  const Array w = Int64s(wide);
  const std::vector<v1::Op> ops = {v1::SUM, v1::PROD, v1::MIN, v1::MAX, v1::MEAN, v1::ARGMAX};
  ExpectAnswers(h_->Reduce(w, ops), ops, w, 0, "full-range int64");
}

TEST_F(ArrayApiTest, Int32SumIsExactPast2To31) {
  const Array a = FromValues(v1::INT32, std::vector<double>(kMillion, 2147483647.0));
  const Outcome got = h_->Reduce(a, {v1::SUM, v1::MEAN});
  ASSERT_TRUE(got.status.ok()) << got.status.error_message();
  EXPECT_EQ(got.response.results(0).int_value(), int64_t{2147483647} * int64_t{kMillion});
  EXPECT_FALSE(got.response.results(0).overflow());
  EXPECT_EQ(got.response.results(0).dtype(), v1::INT64);
  EXPECT_EQ(got.response.results(1).value(), 2147483647.0);
  EXPECT_EQ(got.response.results(1).dtype(), v1::FLOAT64);
}

// ---- Float16 limits.

TEST_F(ArrayApiTest, Float16NearItsLimits) {
  const double tiny = std::ldexp(1.0, -24);  // the smallest subnormal
  struct Case {
    std::vector<double> values;
    v1::Op op;
    double want;
  };
  const std::vector<Case> cases = {
      {{65504, 65504}, v1::SUM, kInf},  // 131008 is past float16
      {{65504, 65504}, v1::MEAN, 65504},
      {{65504, 65504}, v1::NANMEAN, 65504},
      {{65504, 8}, v1::SUM, 65504},  // 65512 rounds down
      {{65504, 16}, v1::SUM, kInf},  // 65520: the tie goes to even, 2^16, past the largest
      {{65504, -65504, 65504}, v1::SUM, 65504},
      {{60000, 60000}, v1::MEAN, 60000},
      {{-200, 200}, v1::VAR, 40000},
      {{-200, 200}, v1::STD, 200},
      {{-65504, 65504}, v1::VAR, kInf},
      {{-65504, 65504}, v1::STD, 65504},
      {{65504, -65504}, v1::MIN, -65504},
      {{2048, 1}, v1::SUM, 2048},  // 2049 ties to even
      {{1000, 1001, 1002}, v1::VAR, 0.66650390625},
      {std::vector<double>(31, tiny), v1::SUM, 31 * tiny},
      {{tiny, 2 * tiny, 3 * tiny}, v1::MEAN, 2 * tiny},
      {{tiny, 2 * tiny}, v1::MEAN, 2 * tiny},  // 1.5 ulp ties to even
      {{tiny, -tiny, tiny}, v1::MIN, -tiny},
      {{std::ldexp(1.0, -14), -tiny}, v1::SUM, std::ldexp(1.0, -14) - tiny},  // normal to subnormal
  };
  for (const Case& c : cases) {
    const Array a = FromValues(v1::FLOAT16, c.values);
    const Outcome got = h_->Reduce(a, {c.op});
    ASSERT_TRUE(got.status.ok()) << got.status.error_message();
    const v1::OpResult& r = got.response.results(0);
    EXPECT_EQ(r.dtype(), v1::FLOAT16);
    EXPECT_EQ(r.value(), c.want) << v1::Op_Name(c.op) << " " << c.values[0];
    ExpectAnswers(got, {c.op}, a, 0, "float16 limits");
  }
  // 2^-12 * 2^-12 = 2^-24: the smallest subnormal, exact.
  const Outcome prod =
      h_->Reduce(FromValues(v1::FLOAT16, {std::ldexp(1.0, -12), std::ldexp(1.0, -12)}), {v1::PROD});
  ASSERT_TRUE(prod.status.ok());
  EXPECT_EQ(prod.response.results(0).value(), tiny);
  // [60000]*8200 + [-60000]*8200: 0 (NumPy's float16 running total overflows).
  std::vector<double> big(8200, 60000.0);
  big.resize(16400, -60000.0);
  const Outcome zero = h_->Reduce(FromValues(v1::FLOAT16, big), {v1::SUM});
  ASSERT_TRUE(zero.status.ok());
  EXPECT_EQ(zero.response.results(0).value(), 0.0);
  // 0.01 a million times: 10000 (exact 10002.17 rounds to float16's 10000).
  const double hundredth = RoundTo(0.01L, v1::FLOAT16);
  const Array many = FromValues(v1::FLOAT16, std::vector<double>(kMillion, hundredth));
  const Outcome sum = h_->Reduce(many, {v1::SUM, v1::MEAN, v1::NANMEAN});
  ASSERT_TRUE(sum.status.ok());
  EXPECT_EQ(sum.response.results(0).value(), 10000.0);
  EXPECT_EQ(sum.response.results(1).value(), hundredth);
  EXPECT_EQ(sum.response.results(2).value(), hundredth);
  ExpectAnswers(sum, {v1::SUM, v1::MEAN, v1::NANMEAN}, many, 0, "0.01 x 1000003");
}

// ---- VAR and STD.

TEST_F(ArrayApiTest, VarAndStdWithDdofZeroOneAndPastTheCount) {
  SCOPED_TRACE(SeedTrace(seed_));
  const std::vector<v1::Op> ops = {v1::VAR, v1::STD, v1::NANVAR, v1::NANSTD};
  for (v1::DType dtype : AllDTypes()) {
    const Array a = RandomArray(dtype, 31, seed_ + dtype);
    for (double ddof : {0.0, 1.0, 1.5, 30.0, 31.0, 32.0, 100.0}) {
      ExpectAnswers(h_->Reduce(a, ops, ddof), ops, a, ddof, "ddof");
    }
  }
  struct Case {
    v1::DType dtype;
    std::vector<double> values;
    v1::Op op;
    double ddof;
    double want;  // NaN: NaN
  };
  const std::vector<Case> cases = {
      {v1::FLOAT64, {1, 3}, v1::VAR, 2, kInf},
      {v1::FLOAT64, {5}, v1::VAR, 1, kNan},
      {v1::FLOAT64, {1, 3}, v1::VAR, 1.5, 4.0},
      {v1::FLOAT64, {1, 3}, v1::VAR, 1, 2.0},
      {v1::FLOAT64, {1, kNan, 3}, v1::NANVAR, 2, kNan},  // np.nanvar of floats: NaN
      {v1::FLOAT64, {1, kNan, 3}, v1::NANVAR, 1, 2.0},
      {v1::INT32, {1, 3}, v1::NANVAR, 2, kInf},  // of integers: var's inf
      {v1::FLOAT32, {2, 2}, v1::VAR, 2, kNan},   // 0 / 0
      {v1::FLOAT16, {1, 3}, v1::STD, 2, kInf},
  };
  for (const Case& c : cases) {
    const Array a = FromValues(c.dtype, c.values);
    const Outcome got = h_->Reduce(a, {c.op}, c.ddof);
    ASSERT_TRUE(got.status.ok()) << got.status.error_message();
    const double value = got.response.results(0).value();
    if (std::isnan(c.want)) {
      EXPECT_TRUE(std::isnan(value)) << v1::Op_Name(c.op) << " ddof " << c.ddof << ": " << value;
    } else {
      EXPECT_EQ(value, c.want) << v1::Op_Name(c.op) << " ddof " << c.ddof;
    }
    ExpectAnswers(got, {c.op}, a, c.ddof, "ddof case");
  }
}

TEST_F(ArrayApiTest, VarianceOfMeanAMillionStdOneIsStable) {
  SCOPED_TRACE(SeedTrace(seed_));
  std::mt19937_64 rng(seed_);
  std::normal_distribution<double> normal(1e6, 1.0);
  std::vector<double> values(kMillion);
  for (double& v : values) v = normal(rng);
  for (v1::DType dtype : {v1::FLOAT64, v1::FLOAT32}) {
    std::vector<double> x = values;
    if (dtype == v1::FLOAT32) {
      for (double& v : x) v = static_cast<float>(v);
    }
    // The float64 two-pass reference, in long double.
    LD sum = 0;
    for (double v : x) sum += v;
    const LD mean = sum / x.size();
    LD m2 = 0;
    for (double v : x) m2 += (v - mean) * (v - mean);
    const Array a = FromValues(dtype, x);
    for (double ddof : {0.0, 1.0}) {
      const double var = static_cast<double>(m2 / (x.size() - ddof));
      const Outcome got = h_->Reduce(a, {v1::VAR, v1::STD}, ddof);
      ASSERT_TRUE(got.status.ok()) << got.status.error_message();
      const double tolerance = dtype == v1::FLOAT64 ? 1e-10 : 1e-7;  // + float32's rounding
      EXPECT_NEAR(got.response.results(0).value(), var, tolerance * var) << DTypeText(dtype);
      EXPECT_NEAR(got.response.results(1).value(), std::sqrt(var), tolerance * std::sqrt(var));
      // Before the rounding to float32, the moments are within 1e-10 too.
      EXPECT_NEAR(got.response.value(), var, 1e-10 * var) << DTypeText(dtype);
    }
  }
}

// NumPy's var of an array holding an infinity is NaN (the mean is infinite, and inf - inf is NaN;
// np.var([np.inf, 1.0]) and np.var([np.inf]) are nan): FinalizeOp answers NaN for VAR and STD
// whenever the mean is not finite (Chan's merge alone would give inf, or 0 for [inf]).
TEST_F(ArrayApiTest, VarAndStdOfAnInfinityAreNan) {
  for (v1::DType dtype : {v1::FLOAT64, v1::FLOAT32, v1::FLOAT16, v1::BFLOAT16}) {
    for (const std::vector<double>& values : std::vector<std::vector<double>>{
             {kInf}, {kInf, 1}, {1, -kInf}, {-kInf, kInf}, {1, 2, kInf, kNan}}) {
      const std::vector<v1::Op> ops = {v1::VAR, v1::STD, v1::NANVAR, v1::NANSTD};
      const Outcome got = h_->Reduce(FromValues(dtype, values), ops);
      ASSERT_TRUE(got.status.ok()) << got.status.error_message();
      for (int i = 0; i < 4; ++i) {
        EXPECT_TRUE(std::isnan(got.response.results(i).value()))
            << v1::Op_Name(ops[i]) << " of " << DTypeText(dtype) << " [" << values[0] << ", ... x"
            << values.size() << "]: " << got.response.results(i).value();
      }
    }
  }
}

// ---- PROD.

TEST_F(ArrayApiTest, ProductsAreExactToTheirLastRounding) {
  std::vector<double> zero_first = {0};
  zero_first.resize(201, 1e30);
  std::vector<double> zero_last(2000, 2.0);
  zero_last.push_back(0);
  for (v1::DType dtype : {v1::FLOAT64, v1::FLOAT32}) {
    for (const auto& values : {zero_first, zero_last}) {
      for (v1::Op op : {v1::PROD, v1::NANPROD}) {
        const Outcome got = h_->Reduce(FromValues(dtype, values), {op});
        ASSERT_TRUE(got.status.ok()) << got.status.error_message();
        EXPECT_EQ(got.response.results(0).value(), 0.0)
            << DTypeText(dtype) << " " << v1::Op_Name(op) << " of " << values.size();
      }
    }
  }
  // Partials beyond float64's range, a finite answer.
  const Outcome far =
      h_->Reduce(FromValues(v1::FLOAT64, {1e-200, 1e-200, 1e300, 1e300}), {v1::PROD});
  ASSERT_TRUE(far.status.ok());
  EXPECT_NEAR(far.response.results(0).value(), 1e200, 1e186);
  const Outcome f16 = h_->Reduce(
      FromValues(v1::FLOAT16, {10000, 10000, 10000, 10000, 10000, RoundTo(1e-4L, v1::FLOAT16),
                               RoundTo(1e-4L, v1::FLOAT16), RoundTo(1e-4L, v1::FLOAT16),
                               RoundTo(1e-4L, v1::FLOAT16), RoundTo(1e-4L, v1::FLOAT16)}),
      {v1::PROD});
  ASSERT_TRUE(f16.status.ok());
  EXPECT_TRUE(std::isfinite(f16.response.results(0).value()));
}

}  // namespace
}  // namespace gpureduce::testing::array_api
