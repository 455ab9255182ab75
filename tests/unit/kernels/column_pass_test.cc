// The columns pass (kernels/cpu/column_pass.cc) through every copy this CPU runs: each column of a
// block against the independent reference over that column alone, for every op the pass serves (all
// but the products: products_test.cc) and every dtype, with NaN, infinities and ties placed in
// columns (int64's at INT64_MIN and INT64_MAX, so that its sums wrap); then ReduceColumns over
// tables narrow (transposed) and wide (the pass), cut in two calls, the second merging after the
// first, and over tasks of several pass calls. Every copy gives the same bits.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/reduction/op_name.h"
#include "gtest/gtest.h"
#include "kernels/cpu/block_reduce.h"
#include "kernels/reduce.h"
#include "tests/support/random_data.h"
#include "tests/unit/kernels/stats_bits.h"
#include "tests/unit/kernels/stats_reference.h"
#include "tests/unit/kernels/typed_array.h"

namespace gpureduce::kernels::cpu {
namespace {

using testing::TypedArray;

std::vector<Op> OpsWithoutProducts() {
  std::vector<Op> ops;
  for (Op op : kAllOps) {
    if (NanFormOf(op) != Op::kProd) ops.push_back(op);
  }
  return ops;
}

TypedArray Column(const TypedArray& table, size_t cols, size_t c) {
  if (IsInteger(table.dtype)) {
    std::vector<int64_t> ints;
    for (size_t i = c; i < table.size(); i += cols) ints.push_back(table.ints[i]);
    return testing::FromInts(table.dtype, ints);
  }
  std::vector<double> values;
  for (size_t i = c; i < table.size(); i += cols) values.push_back(table.values[i]);
  return testing::FromValues(table.dtype, values);
}

// Every op of every column against the reference; the failures, one a line (at most 12).
std::string CheckColumns(const TypedArray& table, size_t cols, const std::vector<Stats>& columns,
                         const std::vector<Op>& ops) {
  std::string failures;
  int shown = 0;
  for (size_t c = 0; c < cols && shown < 12; ++c) {
    const TypedArray own = Column(table, cols, c);
    for (Op op : ops) {
      const std::string error = testing::CheckResult(testing::ReferenceOf(op, own, 1),
                                                     FinalizeOp(op, table.dtype, 1, columns[c]));
      if (error.empty()) continue;
      failures += absl::StrCat("column ", c, " ", OpName(op), ": ", error, "\n");
      ++shown;
    }
  }
  return failures;
}

TypedArray Table(DType dtype, size_t rows, size_t cols, std::mt19937_64& random,
                 bool specials = true) {
  TypedArray table = testing::RandomArray(dtype, rows * cols, random());
  if (IsInteger(dtype)) {
    for (size_t r = 1; r < rows; r += 3) table.SetInt(r * cols + 2, table.ints[2]);  // ties
    const bool narrow = dtype == DType::kInt32;
    for (size_t r = 2; r < rows; r += 3) {  // ties at each extreme
      table.SetInt(r * cols + 4, narrow ? INT32_MIN : INT64_MIN);
      table.SetInt(r * cols + 5, narrow ? INT32_MAX : INT64_MAX);
    }
    return table;
  }
  for (size_t r = 1; r < rows; r += 3) table.Set(r * cols + 7, table.values[7]);  // ties
  if (dtype == DType::kFloat64 && rows >= 2) {  // squares that overflow about the shift (the
    table.Set(0, 0.7e154);                      // first row's) but not about the mean
    table.Set(cols, -0.7e154);
  }
  for (size_t r = 2; r < rows; r += 3) {  // ties at each extreme (values lie within +/-2^11)
    table.Set(r * cols + 4, -4096.0);
    table.Set(r * cols + 2, 4096.0);
  }
  if (!specials) return table;
  for (size_t r = 0; r < rows; r += 5) table.Set(r * cols + 1, NAN);  // a column of some NaN
  for (size_t r = 0; r < rows; ++r) table.Set(r * cols + 3, NAN);     // one all NaN
  table.Set(4 * cols + 5, INFINITY);
  table.Set(6 * cols + 5, -INFINITY);
  table.Set(2 * cols + 6, INFINITY);
  return table;
}

class ColumnPassTest : public ::testing::TestWithParam<DType> {};

TEST_P(ColumnPassTest, EveryCopyMatchesTheReferenceWithTheSameBits) {
  const DType dtype = GetParam();
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 random(seed);
  // Rows closer than a page, a row at a time (the sums and moments of floats first without the
  // NaN masks: a table with no NaN keeps that pass, one with NaN or infinities of both signs runs
  // again with them), and rows a page or more apart, in column_chunks.h's groups (each call a
  // group and 4 rows, then a group and 1), as are 16-bit floats' narrow tables (40 columns: two
  // chunks and 8 alone).
  constexpr std::tuple<size_t, size_t, bool> kTables[] = {{150, 200, true}, {150, 200, false},
                                                          {37, 2100, true}, {37, 2100, false},
                                                          {45, 40, true},   {45, 40, false}};
  for (const auto& [table_rows, table_cols, specials] : kTables) {
    SCOPED_TRACE(absl::StrCat("(", table_rows, ", ", table_cols, ")", specials ? "" : " no NaN"));
    const TypedArray table = Table(dtype, table_rows, table_cols, random, specials);
    const size_t element = DTypeSize(dtype);
    // Every op the pass serves, then the sums alone, whose sums and NaN counts must keep the bits
    // of the first; then ops with copies of their own (an
    // extreme alone gathers no sums and not the other extreme; SUM_SQUARES no extremes or
    // moments), and both extremes.
    std::vector<Stats> every_op;
    for (const std::vector<Op>& ops :
         {OpsWithoutProducts(), std::vector<Op>{Op::kSum, Op::kNanMean}, std::vector<Op>{Op::kMin},
          std::vector<Op>{Op::kNanArgMax}, std::vector<Op>{Op::kNanVar},
          std::vector<Op>{Op::kSumSquares}, std::vector<Op>{Op::kArgMin, Op::kMax},
          std::vector<Op>{Op::kSum, Op::kMin, Op::kMax, Op::kMean, Op::kStd}}) {
      SCOPED_TRACE(absl::StrCat(OpName(ops.front()), " and ", ops.size() - 1, " more"));
      const StatsNeeds needs = NeedsOf(ops);
      std::vector<Stats> first;
      for (const Passes* passes : RunnablePasses()) {
        std::vector<Stats> columns(table_cols, EmptyStats(dtype));
        // The first 20 rows, then the rest (merged after), in column calls of at most
        // kColumnsPassWidth.
        for (size_t r0 : {size_t{0}, size_t{20}}) {
          const size_t rows = r0 == 0 ? 20 : table_rows - 20;
          for (size_t c0 = 0; c0 < table_cols; c0 += kColumnsPassWidth) {
            const size_t width = std::min(kColumnsPassWidth, table_cols - c0);
            passes->add_columns(dtype, needs, table.bytes.data() + (r0 * table_cols + c0) * element,
                                table_cols, rows, width, r0, columns.data() + c0);
          }
        }
        EXPECT_EQ(CheckColumns(table, table_cols, columns, ops), "");
        if (ops == std::vector<Op>{Op::kMin}) {  // MIN alone keeps no maxima: index -1, none
          for (size_t c = 0; c < table_cols; ++c) EXPECT_EQ(columns[c].max_index, -1) << c;
        }
        if (first.empty()) {
          first = columns;
          continue;
        }
        for (size_t c = 0; c < table_cols; ++c) {
          EXPECT_TRUE(testing::SameStatsBits(first[c], columns[c])) << "column " << c;
        }
      }
      if (every_op.empty()) {
        every_op = first;
        continue;
      }
      // Every copy counts NaN; all but an extreme's alone add the sums.
      const bool sums = needs.sum || needs.moments || needs.min == needs.max;
      for (size_t c = 0; c < table_cols; ++c) {
        EXPECT_EQ(every_op[c].nan_count, first[c].nan_count) << "column " << c;
        if (!sums) continue;
        EXPECT_EQ(std::memcmp(&every_op[c].sum, &first[c].sum, sizeof(double)), 0)
            << "column " << c;
        EXPECT_EQ(every_op[c].int_sum, first[c].int_sum) << "column " << c;
        EXPECT_EQ(every_op[c].int_sum_wraps, first[c].int_sum_wraps) << "column " << c;
      }
    }
  }
}

TEST_P(ColumnPassTest, ReduceColumnsNarrowAndWideInTwoCalls) {
  const DType dtype = GetParam();
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 random(seed);
  ThreadPool pool(3), one(1);
  std::vector<Op> ops(std::begin(kAllOps), std::end(kAllOps));  // PROD too: transposed
  // (1100, 4100): 17 tiles of 256 columns, its second call (734 rows) cut into two row blocks.
  constexpr std::pair<size_t, size_t> kShapes[] = {{1000, 3},   {53, 1100},   {3000, 70},
                                                   {301, 1000}, {1200, 1024}, {1100, 4100}};
  for (const auto& [rows, cols] : kShapes) {
    SCOPED_TRACE(absl::StrCat("(", rows, ", ", cols, ")"));
    const TypedArray table = Table(dtype, rows, std::max<size_t>(cols, 8), random);
    const size_t width = std::max<size_t>(cols, 8);
    for (const std::vector<Op>& set : {ops, OpsWithoutProducts()}) {
      const StatsRequest request{dtype, NeedsOf(set)};
      std::vector<Stats> columns(width, EmptyStats(dtype));
      const size_t split = rows / 3;
      const size_t element = DTypeSize(dtype);
      ReduceColumns(pool, request, std::span(table.bytes).first(split * width * element), split,
                    columns, 0);
      ReduceColumns(pool, request, std::span(table.bytes).subspan(split * width * element),
                    rows - split, columns, split);
      EXPECT_EQ(CheckColumns(table, width, columns, set), "");
      // On one thread, every merge in one task: the same bits (each column merges its row
      // blocks in the same order whichever task merges it).
      std::vector<Stats> alone(width, EmptyStats(dtype));
      ReduceColumns(one, request, std::span(table.bytes).first(split * width * element), split,
                    alone, 0);
      ReduceColumns(one, request, std::span(table.bytes).subspan(split * width * element),
                    rows - split, alone, split);
      for (size_t c = 0; c < width; ++c) {
        EXPECT_TRUE(testing::SameStatsBits(columns[c], alone[c])) << "column " << c;
      }
    }
  }
}

// A narrow table in tasks of 2,560 rows (70,000 rows of 36 columns in 28 row blocks; 16-bit
// floats' 4,096), each reduced in several pass calls: integers' of 2,048 rows, floats' first of
// 512, then of 2,048 while the task's columns hold no NaN, else of 512 (columns_reduce.cc). One
// float table has no NaN, the other one, in its second row block's first call (the rest of that
// block in calls of 512 rows); the answers against the reference, and the same bits on one
// thread as on three.
TEST_P(ColumnPassTest, LongTasksGoInSeveralPassCalls) {
  const DType dtype = GetParam();
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 random(seed);
  ThreadPool pool(3), one(1);
  constexpr size_t kRows = 70'000, kCols = 36;
  const std::vector<Op> ops = {Op::kSum, Op::kMin, Op::kNanArgMax, Op::kNanMean, Op::kVar};
  for (const bool nan : {false, true}) {
    if (nan && IsInteger(dtype)) continue;
    SCOPED_TRACE(nan ? "a NaN in the second row block" : "no NaN");
    TypedArray table = Table(dtype, kRows, kCols, random, /*specials=*/false);
    if (nan) table.Set((2560 + 100) * kCols + 9, NAN);
    const StatsRequest request{dtype, NeedsOf(ops)};
    std::vector<Stats> columns(kCols, EmptyStats(dtype)), alone(kCols, EmptyStats(dtype));
    ReduceColumns(pool, request, table.bytes, kRows, columns, 0);
    ReduceColumns(one, request, table.bytes, kRows, alone, 0);
    EXPECT_EQ(CheckColumns(table, kCols, columns, ops), "");
    for (size_t c = 0; c < kCols; ++c) {
      EXPECT_TRUE(testing::SameStatsBits(columns[c], alone[c])) << "column " << c;
    }
  }
}

// 16-bit floats' blocks with no NaN, which the AVX-512 copy adds in strips (half_strips.h) and
// the others a row at a time: the same bits in every copy, and the reference's answers. Columns
// of either zero first (an extreme of zeros is the first), one-signed infinities, the largest
// finite values and subnormals, ties; widths that end in part of a strip's group (7, 33, 203),
// blocks of several bands of rows (130 rows of 1,024 columns, 600 of 520), float16's moments over
// as many rows as its sums follow from them exactly and more (4,096, 5,000), a column whose first
// row, the moments' shift, is infinite, and blocks with a NaN
// or infinities of both signs in a column, which the strips leave to the loops.
TEST(ColumnPassStripsTest, SixteenBitColumnsKeepTheBitsOfEveryCopy) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 random(seed);
  enum Spoil { kNone, kNan, kBothInfinities };
  constexpr std::tuple<size_t, size_t, Spoil> kBlocks[] = {{8, 1, kNone},
                                                           {9, 7, kNone},
                                                           {40, 33, kNone},
                                                           {300, 203, kNone},
                                                           {130, 1024, kNone},
                                                           {600, 520, kNone},
                                                           {2048, 64, kNone},
                                                           {4096, 9, kNone},
                                                           {5000, 9, kNone},
                                                           {300, 203, kNan},
                                                           {300, 203, kBothInfinities}};
  const std::vector<std::vector<Op>> kOpSets = {
      {Op::kSum},       {Op::kNanMean},    {Op::kVar},          {Op::kNanStd},
      {Op::kMin},       {Op::kNanMax},     {Op::kArgMin},       {Op::kArgMax},
      {Op::kNanArgMin}, {Op::kSumSquares}, {Op::kSum, Op::kMin}};
  for (const DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    const bool half = dtype == DType::kFloat16;
    const double largest = half ? 65504.0 : 0x1.fep127, tiny = half ? 0x1p-24 : 0x1p-133;
    for (const auto& [rows, cols, spoil] : kBlocks) {
      SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " (", rows, ", ", cols, ") spoil ", spoil));
      TypedArray table = testing::RandomArray(dtype, rows * cols, random());
      const auto set = [&](size_t r, size_t c, double value) {
        if (c < cols) table.Set(r * cols + c, value);
      };
      for (size_t r = 0; r < rows; ++r) {
        set(r, 0, r % 2 == 0 ? -0.0 : 0.0);                                // zeros, -0 first
        set(r, 1, r == 3 ? 0.0 : r == 5 ? -0.0 : 1.0 + r % 100);           // least +0, then -0
        set(r, 2, r == 2 ? -0.0 : r == 4 ? 0.0 : -1.0 - r % 100);          // greatest -0, then +0
        set(r, 3, r == rows / 2 ? INFINITY : r % 2 ? largest : -largest);  // +inf once
        set(r, 4, r == 1 || r == 6 ? -INFINITY : tiny * (r % 5));          // -inf tied
        set(r, 5, r % 3 == 0 ? -tiny : largest / 2);                       // subnormals
        if (r % 3 == 2) set(r, 6, -1000.0);                                // ties of the least
        set(r, 7, r == 0 ? INFINITY : 2.0 * (r % 50));  // +inf first: the moments' shift
      }
      if (spoil == kNan) set(rows - 3, cols - 1, NAN);
      if (spoil == kBothInfinities) {
        set(1, cols - 1, INFINITY);
        set(rows - 2, cols - 1, -INFINITY);
      }
      for (const std::vector<Op>& ops : kOpSets) {
        SCOPED_TRACE(absl::StrCat(OpName(ops.front()), " and ", ops.size() - 1, " more"));
        std::vector<Stats> first;
        for (const Passes* passes : RunnablePasses()) {
          std::vector<Stats> columns(cols, EmptyStats(dtype));
          passes->add_columns(dtype, NeedsOf(ops), table.bytes.data(), cols, rows, cols, 0,
                              columns.data());
          EXPECT_EQ(CheckColumns(table, cols, columns, ops), "");
          if (first.empty()) {
            first = columns;
            continue;
          }
          for (size_t c = 0; c < cols; ++c) {
            EXPECT_TRUE(testing::SameStatsBits(first[c], columns[c])) << "column " << c;
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryDType, ColumnPassTest, ::testing::ValuesIn(kAllDTypes),
                         [](const auto& info) { return std::string(DTypeName(info.param)); });

}  // namespace
}  // namespace gpureduce::kernels::cpu
