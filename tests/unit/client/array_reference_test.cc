// The client's answers to array requests (client/array_reference.h) against loops written out
// here over fresh random data, and the check of a server's arrays against them.

#include "client/array_reference.h"

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpureduce::client {
namespace {

using ::testing::HasSubstr;

uint64_t FreshSeed() { return (uint64_t{std::random_device{}()} << 32) | std::random_device{}(); }

// Mixed sign and magnitude float64 values.
std::vector<double> MixedSign(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mantissa(1, 2);
  std::uniform_int_distribution<int> exponent(-10, 10), sign(0, 1);
  std::vector<double> values(n);
  for (double& x : values) x = (sign(rng) ? -1 : 1) * std::ldexp(mantissa(rng), exponent(rng));
  return values;
}

std::string Bytes(const std::vector<double>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double));
}

// The payload cut into pieces at uneven places (one of them empty), as a stream's chunks are.
std::vector<absl::string_view> Pieces(const std::string& bytes) {
  std::vector<absl::string_view> pieces;
  const size_t cuts[] = {0, 3 * 8, 3 * 8, 100 * 8, bytes.size()};
  for (size_t i = 0; i + 1 < std::size(cuts); ++i) {
    const size_t from = std::min(cuts[i], bytes.size()), to = std::min(cuts[i + 1], bytes.size());
    pieces.push_back(absl::string_view(bytes).substr(from, to - from));
  }
  return pieces;
}

// An array request's OpResult holding `answers` as float64 (or int64 indices for an arg op).
v1::OpResult Encode(v1::Op op, const std::vector<uint64_t>& shape,
                    const std::vector<TypedReference::Answer>& answers) {
  v1::OpResult result;
  result.set_op(op);
  result.set_dtype(answers.empty() ? v1::FLOAT64 : answers.front().dtype);
  for (const uint64_t extent : shape) result.add_shape(extent);
  std::string data;
  for (const TypedReference::Answer& answer : answers) {
    char bytes[8];
    if (answer.index >= 0) {
      std::memcpy(bytes, &answer.index, 8);
    } else {
      std::memcpy(bytes, &answer.value, 8);
    }
    data.append(bytes, 8);
  }
  result.set_data(data);
  return result;
}

TEST(ComputeArrayAnswersTest, AxesOfAThreeDimensionalArrayMatchLoops) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(absl::StrCat("seed=", seed));
  const uint64_t d0 = 5, d1 = 7, d2 = 11;
  const std::vector<double> x = MixedSign(d0 * d1 * d2, seed);
  const std::string bytes = Bytes(x);
  const auto at = [&](uint64_t i, uint64_t j, uint64_t k) { return x[(i * d1 + j) * d2 + k]; };

  ArrayLayout layout;
  layout.shape = {d0, d1, d2};
  layout.axes = {0, -1};  // keep axis 1
  ArrayAnswers answers =
      ComputeArrayAnswers(layout, {v1::SUM, v1::MAX}, DType::kFloat64, 0, Pieces(bytes));
  ASSERT_EQ(answers.size(), 2u);
  ASSERT_EQ(answers[0].size(), d1);
  for (uint64_t j = 0; j < d1; ++j) {
    double sum = 0, abs_sum = 0, max = -INFINITY;
    for (uint64_t i = 0; i < d0; ++i) {
      for (uint64_t k = 0; k < d2; ++k) {
        sum += at(i, j, k);
        abs_sum += std::fabs(at(i, j, k));
        max = std::max(max, at(i, j, k));
      }
    }
    EXPECT_NEAR(answers[0][j].value, sum, 1e-12 * abs_sum) << j;
    EXPECT_EQ(answers[1][j].value, max) << j;
  }

  // Along the middle axis, with keepdims: outputs in C order of (d0, 1, d2); argmin's index
  // counts along the axis.
  layout.axes = {1};
  layout.keepdims = true;
  EXPECT_EQ(ResultShape(layout), (std::vector<uint64_t>{d0, 1, d2}));
  answers = ComputeArrayAnswers(layout, {v1::ARGMIN}, DType::kFloat64, 0, Pieces(bytes));
  ASSERT_EQ(answers[0].size(), d0 * d2);
  for (uint64_t i = 0; i < d0; ++i) {
    for (uint64_t k = 0; k < d2; ++k) {
      int64_t best = 0;
      for (uint64_t j = 1; j < d1; ++j) {
        if (at(i, j, k) < at(i, best, k)) best = static_cast<int64_t>(j);
      }
      EXPECT_EQ(answers[0][i * d2 + k].index, best) << i << "," << k;
    }
  }

  // Every axis: one output, the flat index.
  layout.axes = {};
  layout.keepdims = false;
  answers = ComputeArrayAnswers(layout, {v1::ARGMAX}, DType::kFloat64, 0, Pieces(bytes));
  ASSERT_EQ(answers[0].size(), 1u);
  EXPECT_EQ(answers[0][0].index, std::max_element(x.begin(), x.end()) - x.begin());
}

TEST(ComputeArrayAnswersTest, SegmentsIncludingAnEmptyOne) {
  const std::vector<double> x = MixedSign(1022, FreshSeed());
  const std::string bytes = Bytes(x);
  ArrayLayout layout;
  layout.segments = {5, 0, 1000, 17};
  const ArrayAnswers answers =
      ComputeArrayAnswers(layout, {v1::SUM, v1::PROD}, DType::kFloat64, 0, Pieces(bytes));
  ASSERT_EQ(answers[0].size(), 4u);
  uint64_t first = 0;
  for (size_t s = 0; s < layout.segments.size(); ++s) {
    double sum = 0, abs_sum = 0;
    for (uint64_t i = first; i < first + layout.segments[s]; ++i) {
      sum += x[i];
      abs_sum += std::fabs(x[i]);
    }
    EXPECT_NEAR(answers[0][s].value, sum, 1e-12 * abs_sum) << s;
    first += layout.segments[s];
  }
  EXPECT_EQ(answers[0][1].value, 0);  // the empty segment: the identities
  EXPECT_EQ(answers[1][1].value, 1);
}

TEST(ComputeArrayAnswersTest, AZeroLengthAxis) {
  ArrayLayout layout;
  layout.shape = {3, 0};
  layout.axes = {1};
  const ArrayAnswers sums = ComputeArrayAnswers(layout, {v1::SUM}, DType::kFloat64, 0, {});
  ASSERT_EQ(sums[0].size(), 3u);
  EXPECT_EQ(sums[0][2].value, 0);
  layout.axes = {0};
  EXPECT_TRUE(ComputeArrayAnswers(layout, {v1::SUM}, DType::kFloat64, 0, {})[0].empty());
}

TEST(CheckArrayResultTest, FindsTheFirstWrongElementByItsIndex) {
  const std::vector<double> x = MixedSign(6 * 4, FreshSeed());
  const std::string bytes = Bytes(x);
  ArrayLayout layout;
  layout.shape = {6, 4};
  layout.axes = {1};
  const std::vector<uint64_t> shape = ResultShape(layout);
  const ArrayAnswers answers =
      ComputeArrayAnswers(layout, {v1::SUM, v1::ARGMAX}, DType::kFloat64, 0, {bytes});
  v1::OpResult sum = Encode(v1::SUM, shape, answers[0]);
  EXPECT_EQ(CheckArrayResult(sum, v1::SUM, shape, answers[0], 1e-9), "");
  const v1::OpResult arg = Encode(v1::ARGMAX, shape, answers[1]);
  EXPECT_EQ(CheckArrayResult(arg, v1::ARGMAX, shape, answers[1], 1e-9), "");

  std::string data = sum.data();
  const double wrong = answers[0][4].value + 1;
  std::memcpy(data.data() + 4 * 8, &wrong, 8);
  v1::OpResult bad = sum;
  bad.set_data(data);
  EXPECT_THAT(CheckArrayResult(bad, v1::SUM, shape, answers[0], 1e-9), HasSubstr(" at [4]"));
  EXPECT_THAT(CheckArrayResult(sum, v1::SUM, {6, 1}, answers[0], 1e-9),
              HasSubstr("result shape (6,), expected (6, 1)"));
  EXPECT_THAT(CheckArrayResult(arg, v1::SUM, shape, answers[0], 1e-9),
              HasSubstr("the result is for argmax"));
  bad = sum;
  bad.set_data(data.substr(8));
  EXPECT_THAT(CheckArrayResult(bad, v1::SUM, shape, answers[0], 1e-9),
              HasSubstr("40 bytes of data for 6 elements"));
  bad = sum;
  bad.set_overflow_count(1);
  EXPECT_THAT(CheckArrayResult(bad, v1::SUM, shape, answers[0], 1e-9),
              HasSubstr("overflow_count 1, expected 0"));
}

TEST(CheckArrayResultTest, IntegerOverflowIsCountedPerElement) {
  // int64 segments [1, 2] and [2^62] * 3: the second's sum (3 x 2^62) wraps, the first's fits.
  const std::vector<int64_t> x = {1, 2, int64_t{1} << 62, int64_t{1} << 62, int64_t{1} << 62};
  const std::string bytes(reinterpret_cast<const char*>(x.data()), x.size() * 8);
  ArrayLayout layout;
  layout.segments = {2, 3};
  const ArrayAnswers answers = ComputeArrayAnswers(layout, {v1::SUM}, DType::kInt64, 0, {bytes});
  ASSERT_EQ(answers[0].size(), 2u);
  EXPECT_FALSE(answers[0][0].overflow);
  EXPECT_TRUE(answers[0][1].overflow);
  v1::OpResult result;
  result.set_op(v1::SUM);
  result.set_dtype(v1::INT64);
  result.add_shape(2);
  const int64_t sums[] = {answers[0][0].int_value, answers[0][1].int_value};
  result.set_data(std::string(reinterpret_cast<const char*>(sums), sizeof(sums)));
  result.set_overflow_count(1);
  EXPECT_EQ(CheckArrayResult(result, v1::SUM, {2}, answers[0], 0), "");
  result.set_overflow_count(0);
  EXPECT_THAT(CheckArrayResult(result, v1::SUM, {2}, answers[0], 0),
              HasSubstr("overflow_count 0, expected 1"));
}

}  // namespace
}  // namespace gpureduce::client
