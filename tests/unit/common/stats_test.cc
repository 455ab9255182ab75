// stats.h: MergeStats is associative (the same answer whichever way an array is split and its
// pieces merged, as tasks, chunks and streams split it) and keeps first occurrences; the stats
// of single elements are written here by hand, not by a kernel.

#include "common/reduction/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace gpureduce {
namespace {

Stats OfFloat(double x, int64_t index) {
  Stats s;
  s.count = 1;
  if (std::isnan(x)) {
    s.nan_count = 1;
    s.first_nan = index;
    return s;
  }
  s.sum = x;
  s.sum_squares = x * x;
  int exponent = 0;
  s.prod = std::frexp(x, &exponent);
  s.prod_exponent = exponent;
  s.min = s.max = x;
  s.min_index = s.max_index = index;
  s.mean = x;
  return s;
}

Stats OfInt(int64_t x, int64_t index) {
  Stats s;
  s.count = 1;
  s.integer = true;
  s.int_sum = x;
  s.sum_squares = static_cast<double>(x) * static_cast<double>(x);
  s.int_prod = static_cast<uint64_t>(x);
  s.int_prod_zero = x == 0;
  s.int_min = s.int_max = x;
  s.min_index = s.max_index = index;
  s.mean = static_cast<double>(x);
  return s;
}

// Pieces [begin, end) merged as a balanced tree: a different association than a left fold.
Stats Tree(const std::vector<Stats>& pieces, size_t begin, size_t end) {
  if (end - begin == 1) return pieces[begin];
  const size_t middle = begin + (end - begin) / 2;
  return MergeStats(Tree(pieces, begin, middle), Tree(pieces, middle, end));
}

Stats Fold(const std::vector<Stats>& pieces, size_t begin, size_t end) {
  Stats out;
  for (size_t i = begin; i < end; ++i) out = MergeStats(out, pieces[i]);
  return out;
}

void ExpectSame(const Stats& a, const Stats& b) {
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.nan_count, b.nan_count);
  EXPECT_EQ(a.first_nan, b.first_nan);
  EXPECT_EQ(a.min_index, b.min_index);
  EXPECT_EQ(a.max_index, b.max_index);
  EXPECT_EQ(a.int_sum, b.int_sum);
  EXPECT_EQ(a.int_sum_wraps, b.int_sum_wraps);
  EXPECT_EQ(a.int_prod, b.int_prod);
  EXPECT_EQ(a.int_prod_overflow, b.int_prod_overflow);
  EXPECT_DOUBLE_EQ(a.sum + a.sum_lo, b.sum + b.sum_lo);
  EXPECT_NEAR(std::ldexp(a.prod, static_cast<int>(a.prod_exponent - b.prod_exponent)), b.prod,
              1e-12);
  EXPECT_NEAR(a.mean, b.mean, 1e-12 * std::fabs(b.mean) + 1e-300);
  EXPECT_NEAR(a.m2, b.m2, 1e-10 * b.m2);
}

TEST(MergeStatsTest, IsAssociativeOverAnySplit) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal(1e3, 10);
  std::vector<Stats> floats, ints;
  for (int64_t i = 0; i < 1000; ++i) {
    floats.push_back(OfFloat(i == 300 || i == 700 ? NAN : normal(rng), i));
    ints.push_back(OfInt(static_cast<int64_t>(rng()), i));  // the sums wrap many times
  }
  for (const std::vector<Stats>* pieces : {&floats, &ints}) {
    const Stats whole = Fold(*pieces, 0, pieces->size());
    ExpectSame(Tree(*pieces, 0, pieces->size()), whole);
    for (size_t cut : {size_t{1}, size_t{299}, size_t{300}, size_t{301}, size_t{999}}) {
      SCOPED_TRACE("cut at " + std::to_string(cut));
      ExpectSame(MergeStats(Tree(*pieces, 0, cut), Fold(*pieces, cut, pieces->size())), whole);
      ExpectSame(MergeStats(Stats{}, MergeStats(Fold(*pieces, 0, cut), Stats{})),
                 Fold(*pieces, 0, cut));
    }
  }
}

TEST(MergeStatsTest, KeepsFirstOccurrencesAndTheMomentsOfTheWhole) {
  const double values[] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 9};
  std::vector<Stats> pieces;
  for (int64_t i = 0; i < 12; ++i) pieces.push_back(OfFloat(values[i], i));
  const Stats whole = Tree(pieces, 0, pieces.size());
  EXPECT_EQ(whole.min_index, 1);
  EXPECT_EQ(whole.max_index, 5);
  double mean = 0, m2 = 0;
  for (double x : values) mean += x / 12;
  for (double x : values) m2 += (x - mean) * (x - mean);
  EXPECT_NEAR(whole.mean, mean, 1e-14);
  EXPECT_NEAR(whole.m2, m2, 1e-12);
}

TEST(MergeStatsTest, IntegerSumsCountTheirWraps) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const Stats up = MergeStats(OfInt(kMax, 0), OfInt(kMax, 1));  // 2^64 - 2
  EXPECT_EQ(up.int_sum, -2);
  EXPECT_EQ(up.int_sum_wraps, 1);
  const Stats back = MergeStats(up, MergeStats(OfInt(-kMax, 2), OfInt(-kMax, 3)));
  EXPECT_EQ(back.int_sum, 0);
  EXPECT_EQ(back.int_sum_wraps, 0);
  const Stats product = MergeStats(OfInt(int64_t{1} << 40, 0), OfInt(int64_t{1} << 40, 1));
  EXPECT_TRUE(product.int_prod_overflow);
  EXPECT_EQ(product.int_prod, 0u);
}

// The contract's overflow is the exact product's: int64's least times -1 is +2^63, out of range,
// but a later -1 brings it back. Every split of the factors must tell the same.
TEST(MergeStatsTest, IntegerProductsThroughTwoTo63AnswerTheExactProductsRange) {
  __extension__ using Int128 = __int128;
  constexpr int64_t kLeast = std::numeric_limits<int64_t>::min();
  constexpr int64_t kHalf = int64_t{1} << 62;
  const std::vector<std::vector<int64_t>> cases = {
      {kLeast, -1, -1},         {kLeast, -1},
      {-1, kLeast, 1, -1},      {kLeast, -1, 1, 1},
      {kLeast, -1, -1, 2},      {kLeast, -1, 0, 3},
      {kHalf, 2, -1},           {kHalf, -2},
      {-kHalf, -2, -1, 1},      {int64_t{1} << 32, int64_t{1} << 31, -1},
      {kLeast, -1, kLeast, -1}, {3, 5, -7, 11},
      {kLeast, 2, 0},           {kLeast, 1, -1, 1, -1},
  };
  for (const std::vector<int64_t>& factors : cases) {
    Int128 exact = 1;
    uint64_t wrapped = 1;
    bool past = false;  // the magnitude passed 2^63 before a 0
    std::vector<Stats> pieces;
    for (size_t i = 0; i < factors.size(); ++i) {
      pieces.push_back(OfInt(factors[i], static_cast<int64_t>(i)));
      wrapped *= static_cast<uint64_t>(factors[i]);
      if (!past) exact *= factors[i];
      past = past || exact > -Int128{kLeast} || exact < kLeast;
    }
    const bool zero = std::count(factors.begin(), factors.end(), 0) > 0;
    const bool leaves = !zero && (past || exact > std::numeric_limits<int64_t>::max());
    SCOPED_TRACE(::testing::PrintToString(factors));
    std::vector<Stats> merged = {Fold(pieces, 0, pieces.size()), Tree(pieces, 0, pieces.size())};
    for (size_t cut = 1; cut < pieces.size(); ++cut) {
      merged.push_back(MergeStats(Fold(pieces, 0, cut), Tree(pieces, cut, pieces.size())));
      merged.push_back(MergeStats(Tree(pieces, 0, cut), Fold(pieces, cut, pieces.size())));
    }
    for (const Stats& s : merged) {
      EXPECT_EQ(s.int_prod, wrapped);
      EXPECT_EQ(s.int_prod_leaves_int64(), leaves);
    }
  }
}

TEST(MergeStatsTest, CompensatedSumKeepsWhatPlainAdditionLoses) {
  double hi = 0, lo = 0;
  for (double x : {1e16, 1.0, 1.0, -1e16}) AddCompensated(x, &hi, &lo);
  EXPECT_EQ(hi + lo, 2.0);
  AddCompensated(std::numeric_limits<double>::infinity(), &hi, &lo);
  EXPECT_EQ(lo, 0.0);  // no NaN error term beside an infinite sum
}

}  // namespace
}  // namespace gpureduce
