// EncodeAnswers: every op's answers over many outputs' Stats equal FinalizeOp then EncodeResult's,
// byte for byte, refusals and overflow counts included, on Stats drawn to reach every branch:
// empty, NaN-holding and all-NaN outputs, infinite means, wrapped integer sums, values at every
// scale of the 16-bit formats (ties, subnormals, past their range).

#include "common/reduction/answer_encoding.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "common/reduction/op_name.h"
#include "common/reduction/op_result.h"
#include "common/reduction/result_encoding.h"
#include "gtest/gtest.h"
#include "tests/support/random_data.h"

namespace gpureduce {
namespace {

// A value at any scale the 16-bit formats meet: some exactly halfway between two float16 or
// bfloat16 neighbours, some infinite or NaN.
double AnyScale(std::mt19937_64& rng) {
  const int exponent = std::uniform_int_distribution<int>(-160, 140)(rng);
  const double sign = rng() % 2 ? -1.0 : 1.0;
  switch (rng() % 8) {
    case 0:  // a float16 tie
      return sign * std::ldexp(std::uniform_int_distribution<int>(1024, 2047)(rng) + 0.5,
                               exponent % 40 - 10);
    case 1:  // a bfloat16 tie
      return sign * std::ldexp(std::uniform_int_distribution<int>(128, 255)(rng) + 0.5, exponent);
    case 2:
      return sign * HUGE_VAL;
    case 3:
      return rng() % 4 ? 0.0 : std::numeric_limits<double>::quiet_NaN();
    default:
      return sign * std::ldexp(std::uniform_real_distribution<double>(0.5, 1.0)(rng), exponent);
  }
}

Stats AnyStats(std::mt19937_64& rng, DType input) {
  Stats s;
  s.integer = IsInteger(input);
  const uint64_t counts[] = {0, 1, 2, 5, 1000003};
  s.count = counts[rng() % 5];
  if (!s.integer && s.count > 0) {
    const uint64_t nans[] = {0, 0, 1, s.count};
    s.nan_count = nans[rng() % 4];
    s.first_nan = s.nan_count > 0 ? static_cast<int64_t>(rng() % s.count) : -1;
  }
  s.sum = AnyScale(rng);
  s.sum_lo = rng() % 2 ? 0.0 : std::ldexp(s.sum, -60);
  s.int_sum = static_cast<int64_t>(rng());
  s.int_sum_wraps = static_cast<int64_t>(rng() % 3) - 1;
  s.sum_squares = std::fabs(AnyScale(rng));
  s.prod = std::uniform_real_distribution<double>(0.5, 1.0)(rng);
  s.prod_exponent = std::uniform_int_distribution<int64_t>(-200, 200)(rng);
  s.int_prod = rng();
  s.int_prod_overflow = rng() % 2;
  s.int_prod_zero = rng() % 4 == 0;
  s.int_prod_two_to_63 = !s.int_prod_overflow && rng() % 3 == 0;
  s.min = AnyScale(rng);
  s.max = AnyScale(rng);
  s.int_min = static_cast<int64_t>(rng());
  s.int_max = static_cast<int64_t>(rng());
  const bool none = s.valid() == 0 || s.count == 0;
  s.min_index = none ? -1 : static_cast<int64_t>(rng() % s.count);
  s.max_index = none ? -1 : static_cast<int64_t>(rng() % s.count);
  s.mean = rng() % 10 ? AnyScale(rng) : HUGE_VAL;
  s.m2 = std::fabs(AnyScale(rng));
  return s;
}

TEST(EncodeAnswersTest, EqualsFinalizeOpAndEncodeResultForEveryOpAndDType) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  std::mt19937_64 rng(seed);
  for (DType input : kAllDTypes) {
    for (Op op : kAllOps) {
      for (double ddof : {0.0, 1.0, 7.5}) {
        std::vector<Stats> stats(400);
        for (Stats& s : stats) s = AnyStats(rng, input);
        const size_t size = DTypeSize(ResultDType(op, input));
        std::vector<std::byte> batched(stats.size() * size, std::byte{0x5a});
        const EncodedAnswers answers = EncodeAnswers(op, input, ddof, stats, batched.data());
        std::vector<std::byte> one(size);
        uint64_t overflows = 0;
        size_t i = 0;
        for (; i < stats.size(); ++i) {
          const absl::StatusOr<OpResult> result = FinalizeOp(op, input, ddof, stats[i]);
          if (!result.ok()) {
            EXPECT_EQ(answers.status, result.status()) << OpName(op);
            EXPECT_EQ(answers.failed, i) << OpName(op);
            break;
          }
          overflows += result->overflow ? 1 : 0;
          EncodeResult(*result, one.data());
          ASSERT_EQ(std::memcmp(one.data(), batched.data() + i * size, size), 0)
              << OpName(op) << " of dtype " << static_cast<int>(input) << ", output " << i
              << ": sum " << stats[i].sum << ", mean " << stats[i].mean << ", count "
              << stats[i].count << ", NaN " << stats[i].nan_count;
        }
        if (i == stats.size()) {
          EXPECT_TRUE(answers.status.ok()) << answers.status;
        }
        EXPECT_EQ(answers.overflows, overflows) << OpName(op);
      }
    }
  }
}

TEST(EncodeAnswersTest, RefusesAtTheFirstAllNanOutputOfANanArgOp) {
  Stats answered;
  answered.count = 3;
  answered.min_index = 1;
  Stats all_nan;
  all_nan.count = 2;
  all_nan.nan_count = 2;
  all_nan.first_nan = 0;
  const std::vector<Stats> stats = {answered, answered, all_nan, answered, all_nan};
  std::vector<std::byte> out(stats.size() * 8);
  const EncodedAnswers answers =
      EncodeAnswers(Op::kNanArgMin, DType::kFloat32, 0, stats, out.data());
  EXPECT_EQ(answers.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(answers.failed, 2u);
  int64_t index = 0;
  std::memcpy(&index, out.data() + 8, 8);
  EXPECT_EQ(index, 1);
}

}  // namespace
}  // namespace gpureduce
