// The short runs pass's products answered eight runs at a time (kernels/cpu/product_answers.h,
// int_product_answers.h) at the ends of their range, through every copy this CPU runs: the
// bytes are EncodeAnswers's over the runs' Stats (AnswersDiffer), and integers' answers that
// left int64 are counted as it counts them.

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/reduction/op_name.h"
#include "gtest/gtest.h"
#include "kernels/cpu/block_reduce.h"
#include "tests/support/random_data.h"
#include "tests/unit/kernels/answers_differ.h"
#include "tests/unit/kernels/runs_data.h"
#include "tests/unit/kernels/typed_array.h"

namespace gpureduce::kernels::cpu {
namespace {

// Products of eight runs of whole groups multiply as they are where every partial product stays
// normal (product_answers.h's RawProductsFit): float16's of up to 32 elements always, float32's
// and bfloat16's where every factor's exponent is within a window. At the ends of each dtype's
// range (every factor subnormal, every factor the largest, both halves of a run each), runs whose
// even elements' product underflows float64 and odd elements' overflows while the run's lies in
// range (outside the window), beside a NaN and 0 times an infinity, for every copy of the eight
// runs (1 to 4, 8 and 16 whole groups, and lengths of no copy): the bytes are EncodeAnswers's
// over the runs' Stats.
TEST(RunsAnswersTest, ProductsAtTheEndsOfTheirRange) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 random(seed);
  for (const DType dtype : {DType::kFloat16, DType::kBFloat16, DType::kFloat32}) {
    SCOPED_TRACE(DTypeName(dtype));
    // The dtype's least subnormal and its significand's bits.
    const int least = dtype == DType::kFloat16 ? -24 : dtype == DType::kBFloat16 ? -133 : -149;
    const int bits = dtype == DType::kFloat16 ? 11 : dtype == DType::kBFloat16 ? 8 : 24;
    const int most = dtype == DType::kFloat16 ? 15 : 127;  // the largest exponent
    std::vector<uint64_t> bounds = {0};
    for (const uint64_t length : {8, 16, 24, 32, 64, 128, 20}) {
      for (int r = 0; r < 16; ++r) bounds.push_back(bounds.back() + length);
    }
    std::vector<double> values(bounds.back());
    const auto sign = [&] { return random() % 2 ? -1.0 : 1.0; };
    for (size_t r = 0; r + 1 < bounds.size(); ++r) {
      const uint64_t start = bounds[r], length = bounds[r + 1] - bounds[r];
      // The underflow's exponent: half the run's factors at 2^-apart underflow float64.
      const int apart = static_cast<int>((1100 + length / 2 - 1) / (length / 2));
      for (uint64_t e = 0; e < length; ++e) {
        const double subnormal = std::ldexp(
            static_cast<double>(1 + random() % ((uint64_t{1} << (bits - 1)) - 1)), least);
        const double largest = std::ldexp(
            static_cast<double>((uint64_t{1} << bits) - 1 - random() % 4), most + 1 - bits);
        double& value = values[start + e];
        switch (r % 7) {
          case 0:
            value = sign() * subnormal;
            break;
          case 1:
            value = sign() * largest;
            break;
          case 2:
            value = sign() * (e < length / 2 ? subnormal : largest);
            break;
          case 3:
            if (dtype != DType::kFloat16 && apart <= 126) {
              value = sign() * (e % 2 == 0 ? std::ldexp(1.25, -apart) : std::ldexp(1.5, apart));
              break;
            }
            [[fallthrough]];
          default:
            value = sign() * std::ldexp(1.0 + static_cast<double>(random() % 128) / 128,
                                        static_cast<int>(random() % 29) - 14);
        }
      }
      if (r % 24 == 4) values[start + length - 1] = NAN;
      if (r % 24 == 11) values[start] = 0.0, values[start + length / 2] = INFINITY;
    }
    const TypedArray data = testing::FromValues(dtype, values);
    const std::vector<const Passes*> copies = RunnablePasses();
    for (const std::vector<Op>& ops : {std::vector<Op>{Op::kProd}, std::vector<Op>{Op::kNanProd}}) {
      for (size_t copy = 0; copy < copies.size(); ++copy) {
        SCOPED_TRACE(absl::StrCat(OpName(ops[0]), ", copy ", copy));
        const bool vectors = copy == 2 && AnsweredByVectors(dtype, ops);
        EXPECT_EQ(AnswersDiffer(*copies[copy], vectors, false, dtype, ops, 0, data, bounds), "");
      }
    }
  }
}

// Integers' products answered eight runs at a time (int_product_answers.h) near the ends of
// int64: +-2^63 (+2^63 leaves it, -2^63 does not), products a few binades either side of 2^63
// (where the magnitudes cannot tell and the factors are checked one at a time; 2^63 + 24, whose
// estimate falls just under 2^63; 2^65, the first the estimate alone says leaves), a 0 among
// factors whose product would leave (its lanes' exponents past 2^66 without the zero check), and
// full-range factors, each run's other elements +-1, in runs of every copy (1 to 4, 8 and 16
// whole groups, and lengths of none): the bytes are EncodeAnswers's over the runs' Stats and the
// answers that left int64 are counted as it counts them; without a counter, the call stops
// before the first eight of which one left (the first eight runs, +-1 alone, are answered).
TEST(RunsAnswersTest, IntegerProductsNearTheEndsOfInt64) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 random(seed);
  const int64_t least64 = INT64_MIN, least32 = INT32_MIN;
  const std::vector<std::vector<int64_t>> int64_factors = {
      {least64},                                            // +-2^63
      {int64_t{1} << 62, 2},                                // +-2^63
      {(int64_t{1} << 62) + 1, 2},                          // just past
      {(int64_t{1} << 31) + 1, (int64_t{1} << 31) - 1, 2},  // 2^63 - 2
      {int64_t{1} << 32, int64_t{1} << 32},                 // 2^64
      {int64_t{1} << 33, int64_t{1} << 33},                 // 2^66
      {0, least64, INT64_MAX, least64},                     // 0
      {3 << 20, 5 << 20, 7},                                // within
      {89547301328687144, 103},                             // 2^63 + 24
      {int64_t{1} << 33, int64_t{1} << 32},                 // 2^65
  };
  const std::vector<std::vector<int64_t>> int32_factors = {
      {least32, least32, 2},                // +-2^63
      {least32, least32, least32},          // 2^93
      {INT32_MAX, INT32_MAX, 2},            // 2^63 - 2^33 + 2
      {65536, 65536, 65536, 32768},         // +-2^63
      {65536, 65536, 65536, 65536},         // 2^64
      {65536, 65536, 65536, 16384, 3},      // 3 * 2^62
      {INT32_MAX, 0, least32, least32, 7},  // 0
      {46341, 46341, 46341},                // within
      {2147418113, 859019674, 5},           // 2^63 + 2
      {65536, 65536, 65536, 65536, 2},      // 2^65
  };
  for (const DType dtype : {DType::kInt32, DType::kInt64}) {
    std::vector<std::vector<int64_t>> factors =
        dtype == DType::kInt32 ? int32_factors : int64_factors;
    // A 0 beside 36 int32 or 18 int64 leasts: 0, its lanes' exponents summing past 1088.
    factors.emplace_back(dtype == DType::kInt32 ? 37 : 19,
                         dtype == DType::kInt32 ? least32 : least64);
    factors.back()[0] = 0;
    std::vector<uint64_t> bounds = {0};
    for (const uint64_t length : {8, 16, 24, 32, 64, 128, 20, 5}) {
      for (int r = 0; r < 16; ++r) bounds.push_back(bounds.back() + length);
    }
    std::vector<int64_t> values(bounds.back());
    for (size_t r = 0; r + 1 < bounds.size(); ++r) {
      const uint64_t start = bounds[r], length = bounds[r + 1] - bounds[r];
      for (uint64_t e = 0; e < length; ++e) values[start + e] = random() % 2 ? -1 : 1;
      if (r < 8) continue;  // +-1 alone: answered without a counter too
      if (r % 16 == 15) {   // full range
        for (uint64_t e = 0; e < length; ++e) {
          values[start + e] = dtype == DType::kInt32 ? static_cast<int32_t>(random())
                                                     : static_cast<int64_t>(random());
        }
        continue;
      }
      const std::vector<int64_t>& special = factors[(r + r / 16) % factors.size()];
      for (size_t f = 0; f < special.size() && f < length; ++f) {
        values[start + (f * 7 + r) % length] = special[f];  // spread over the lanes
      }
    }
    const TypedArray data = testing::FromInts(dtype, values);
    const std::vector<const Passes*> copies = RunnablePasses();
    for (const Op op : {Op::kProd, Op::kNanProd}) {
      for (size_t copy = 0; copy < copies.size(); ++copy) {
        for (const bool counters : {true, false}) {
          SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " ", OpName(op), ", copy ", copy,
                                    counters ? ", counted" : ", no counter"));
          EXPECT_EQ(AnswersDiffer(*copies[copy], copy == 2, false, dtype, {op}, 0, data, bounds,
                                  counters),
                    "");
        }
      }
    }
  }
}

}  // namespace
}  // namespace gpureduce::kernels::cpu
