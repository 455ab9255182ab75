// The NaN / first-occurrence rule every backend and kernel shares, on the host, against NumPy's
// behaviour written out case by case.

#include "common/extreme_order.h"

#include <cmath>
#include <limits>
#include <vector>

#include "common/reduction/partial.h"
#include "gtest/gtest.h"
#include "tests/support/random_data.h"

namespace gpureduce::kernels {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(ExtremeOrderTest, PickIsNumpysMinimumAndMaximum) {
  EXPECT_EQ(PickExtreme(true, 1.0f, 2.0f), 1.0f);
  EXPECT_EQ(PickExtreme(true, 2.0f, 1.0f), 1.0f);
  EXPECT_EQ(PickExtreme(false, 1.0f, 2.0f), 2.0f);
  EXPECT_EQ(PickExtreme(true, -kInf, 3.0f), -kInf);
  EXPECT_EQ(PickExtreme(false, 3.0f, kInf), kInf);
  for (bool less : {true, false}) {
    EXPECT_TRUE(std::isnan(PickExtreme(less, kNaN, 1.0f)));
    EXPECT_TRUE(std::isnan(PickExtreme(less, 1.0f, kNaN)));
    EXPECT_TRUE(std::isnan(PickExtreme(less, kNaN, kNaN)));
    EXPECT_TRUE(std::isnan(PickExtreme<double>(less, 1.0, std::nan(""))));
  }
}

TEST(ExtremeOrderTest, PrecedesPutsNanFirstThenTheExtremeThenTheLowerIndex) {
  for (bool less : {true, false}) {
    const float better = less ? -1.0f : 1.0f, worse = less ? 1.0f : -1.0f;
    EXPECT_TRUE(PrecedesExtreme(less, better, 5, worse, 2));
    EXPECT_FALSE(PrecedesExtreme(less, worse, 1, better, 2));
    EXPECT_TRUE(PrecedesExtreme(less, 0.5f, 1, 0.5f, 2)) << "ties go to the lower index";
    EXPECT_FALSE(PrecedesExtreme(less, 0.5f, 2, 0.5f, 1));
    EXPECT_TRUE(PrecedesExtreme(less, kNaN, 9, better, 1)) << "a NaN goes before any number";
    EXPECT_FALSE(PrecedesExtreme(less, better, 1, kNaN, 9));
    EXPECT_TRUE(PrecedesExtreme(less, kNaN, 3, kNaN, 4)) << "the first NaN goes first";
    EXPECT_FALSE(PrecedesExtreme(less, kNaN, 4, kNaN, 3));
  }
}

TEST(ExtremeOrderTest, LaterPrecedesIsPrecedesForAHigherIndex) {
  const float values[] = {-kInf, -2.0f, -0.0f, 0.0f, 1.5f, kInf, kNaN};
  for (bool less : {true, false}) {
    for (float later : values) {
      for (float earlier : values) {
        EXPECT_EQ(LaterPrecedes(less, later, earlier),
                  PrecedesExtreme(less, later, int64_t{7}, earlier, int64_t{3}))
            << "less=" << less << " later=" << later << " earlier=" << earlier;
      }
    }
  }
}

TEST(ExtremeOrderTest, ReducingByPrecedesInAnyOrderFindsTheFirstOccurrence) {
  // A total order: folding the elements in any order must give the same first occurrence.
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  std::vector<float> data = testing::MixedSignData(1000, seed);
  for (size_t i = 0; i < data.size(); i += 7) data[i] = data[3];  // many ties
  for (bool with_nan : {false, true}) {
    if (with_nan) data[600] = data[800] = kNaN;
    for (bool less : {true, false}) {
      auto fold = [&](bool backwards) {
        int64_t best = -1;
        for (size_t k = 0; k < data.size(); ++k) {
          const int64_t i = backwards ? int64_t(data.size() - 1 - k) : int64_t(k);
          if (best < 0 || PrecedesExtreme(less, data[i], i, data[best], best)) best = i;
        }
        return best;
      };
      int64_t expected = 0;
      for (size_t i = 1; i < data.size(); ++i) {
        if (std::isnan(data[expected])) break;
        if (std::isnan(data[i]) || (less ? data[i] < data[expected] : data[i] > data[expected])) {
          expected = int64_t(i);
        }
      }
      EXPECT_EQ(fold(false), expected) << "less=" << less << " nan=" << with_nan;
      EXPECT_EQ(fold(true), expected) << "less=" << less << " nan=" << with_nan;
    }
  }
}

TEST(ExtremeOrderTest, CombineKeepsTheEarlierPartialOnTiesAndNans) {
  const Partial left{2.0, 10, 5}, right_tie{2.0, 20, 5}, right_nan{std::nan(""), 30, 5};
  EXPECT_EQ(Combine(Op::kArgMin, left, right_tie).index, 10);
  EXPECT_EQ(Combine(Op::kArgMax, left, right_tie).index, 10);
  EXPECT_EQ(Combine(Op::kArgMin, left, right_nan).index, 30);
  EXPECT_EQ(Combine(Op::kArgMin, right_nan, Partial{std::nan(""), 40, 5}).index, 30);
  EXPECT_TRUE(std::isnan(Combine(Op::kMax, left, right_nan).value));
  EXPECT_EQ(Combine(Op::kMin, left, Partial{1.0, -1, 1}).value, 1.0);
  EXPECT_EQ(Combine(Op::kMin, left, right_tie).count, 10u);
}

}  // namespace
}  // namespace gpureduce::kernels
