// The products of the cpu kernel's passes (kernels/cpu/product_lanes.h): the short runs pass's
// (run_products.h), the columns pass's (rows closer than a page, a row at a time, and rows a page
// apart, in groups) and the product pass's over whole blocks, through every copy this CPU runs,
// against the independent reference for PROD and NANPROD, every dtype. Float factors lie near 1
// in magnitude (so that a product stays inside the dtype and its bits mean something), of either
// sign, with zeros, NaN, infinities, subnormals and runs of extremes whose partial products would
// leave float64 placed among them; integer factors are small, with zeros, the least integer and
// products at and about 2^63 (wrapped, and overflowing or not). Every copy gives the same bits,
// and so do the columns pass's two loops.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <random>
#include <string>
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

constexpr Op kProducts[] = {Op::kProd, Op::kNanProd};

// The dtype's mantissa bits and its largest power of two's exponent.
struct Format {
  int mantissa_bits;
  int most_exponent;
};
Format FormatOf(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return {10, 15};
    case DType::kBFloat16:
      return {7, 127};
    case DType::kFloat64:
      return {52, 1023};
    default:
      return {23, 127};
  }
}

// n factors +-(1 + k / 2^p) * 2^e, e in {-1, 0}: the product of a few thousand stays far inside
// every float dtype. Integers: +-1 half the time, else +-2 or +-3, so products of some dozens
// leave int64 and shorter ones do not.
std::vector<double> NearOne(DType dtype, size_t n, std::mt19937_64& random) {
  const int bits = FormatOf(dtype).mantissa_bits;
  std::vector<double> values(n);
  for (double& v : values) {
    if (IsInteger(dtype)) {
      constexpr double kFactors[] = {1, -1, 1, -1, 2, -2, 3, -3};
      v = kFactors[random() % 8];
      continue;
    }
    const double mantissa = 1.0 + std::ldexp(static_cast<double>(random() >> (64 - bits)), -bits);
    v = std::ldexp(random() % 2 == 0 ? mantissa : -mantissa, -static_cast<int>(random() % 2));
  }
  return values;
}

// Specials written over the factors of stretch k (a run's, a column's or a block's `cells`): a
// zero, NaN, an infinity, an infinity and a zero (NaN), or the dtype's largest power of two over
// the first half of the cells and its inverse (subnormal in every dtype) over the second: a
// product of +-1 whose partial products leave float64's range unless the passes renormalize; or
// nothing.
void PlaceSpecials(DType dtype, size_t k, const std::vector<size_t>& cells,
                   std::vector<double>& values) {
  const Format f = FormatOf(dtype);
  if (cells.empty()) return;
  const size_t a = cells.front(), b = cells[cells.size() / 2], c = cells.back();
  switch (k % 7) {
    case 1:
      values[b] = 0.0;
      break;
    case 2:
      values[a] = NAN;
      values[c] = NAN;
      break;
    case 3:
      values[b] = -INFINITY;
      break;
    case 4:
      values[a] = INFINITY;
      values[c] = -0.0;
      break;
    case 5:  // half the cells the largest power of two, then as many its inverse
      for (size_t i = 0; i < cells.size() / 2; ++i) {
        values[cells[i]] = std::ldexp(1.0, f.most_exponent);
        values[cells[cells.size() / 2 + i]] = std::ldexp(-1.0, -f.most_exponent);
      }
      break;
    default:
      break;
  }
}

// Integers' specials over stretch k's `cells`, the others' factors made 1 where the product's
// sign and size must be exact: a zero among the factors; products of -2^63 (int64's least: no
// overflow), +2^63 (one past its most), -2^62, 2^80 and more, and -2^63 through +2^63 (a -1
// brings it back); or int64's (int32's) least among the factors. Those near 2^63 take the exact
// check (LeavesInt64 cannot tell).
void PlaceIntSpecials(DType dtype, size_t k, const std::vector<size_t>& cells,
                      std::vector<double>& values) {
  if (cells.size() < 3) return;
  const bool narrow = dtype == DType::kInt32;
  const auto place = [&](std::vector<double> factors) {
    if (cells.size() < factors.size()) return;
    for (size_t i : cells) values[i] = 1;
    for (size_t i = 0; i < factors.size(); ++i)
      values[cells[i * (cells.size() - 1) / (factors.size() - 1)]] = factors[i];
  };
  const double two30 = 0x1p30, two62 = 0x1p62;
  switch (k % 8) {
    case 1:
      values[cells[cells.size() / 2]] = 0;
      break;
    case 2:
      place(narrow ? std::vector<double>{-8, two30, two30} : std::vector<double>{-2, two62});
      break;
    case 3:
      place(narrow ? std::vector<double>{8, two30, two30} : std::vector<double>{2, two62});
      break;
    case 4:
      place(narrow ? std::vector<double>{4, two30, -two30} : std::vector<double>{two62, -1});
      break;
    case 5:
      place(narrow ? std::vector<double>{two30, two30, two30}
                   : std::vector<double>{0x1p40, 0x1p40});
      break;
    case 6:
      values[cells.front()] = narrow ? -0x1p31 : -0x1p63;
      break;
    case 7:
      place(narrow ? std::vector<double>{-0x1p31, -0x1p31, 2, -1}
                   : std::vector<double>{-0x1p63, -1, -1});
      break;
    default:
      break;
  }
}

// The values as an array of `dtype` (integers exact in a double).
TypedArray Array(DType dtype, const std::vector<double>& values) {
  if (!IsInteger(dtype)) return testing::FromValues(dtype, values);
  return testing::FromInts(dtype, std::vector<int64_t>(values.begin(), values.end()));
}

// The specials of the dtype's kind.
void PlaceAnySpecials(DType dtype, size_t k, const std::vector<size_t>& cells,
                      std::vector<double>& values) {
  if (IsInteger(dtype)) {
    PlaceIntSpecials(dtype, k, cells, values);
  } else {
    PlaceSpecials(dtype, k, cells, values);
  }
}

// Each product op of `got` against the reference over `own`; the failures, one a line.
std::string CheckProducts(DType dtype, const std::vector<double>& own, const Stats& got,
                          const std::string& where) {
  std::string failures;
  const TypedArray array = Array(dtype, own);
  for (Op op : kProducts) {
    const std::string error =
        testing::CheckResult(testing::ReferenceOf(op, array, 1), FinalizeOp(op, dtype, 1, got));
    if (!error.empty()) absl::StrAppend(&failures, where, " ", OpName(op), ": ", error, "\n");
  }
  return failures;
}

class ProductsTest : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override {
    const uint64_t seed = testing::FreshSeed();
    trace_.emplace(__FILE__, __LINE__, absl::StrCat("seed ", seed));
    random_.seed(seed);
  }
  std::optional<::testing::ScopedTrace> trace_;
  std::mt19937_64 random_;
};

const StatsNeeds kNeeds = NeedsOf(std::vector<Op>{Op::kProd});

TEST_P(ProductsTest, RunsMatchTheReferenceWithTheSameBitsInEveryCopy) {
  const DType dtype = GetParam();
  std::vector<uint64_t> bounds = {0};
  for (uint64_t length :
       {4, 5, 7, 8, 9, 15, 16, 17, 31, 48, 49, 63, 64, 100, 128, 129, 200, 511, 512}) {
    for (int copies = 0; copies < 7; ++copies) bounds.push_back(bounds.back() + length);
  }
  const size_t runs = bounds.size() - 1;
  std::vector<double> values = NearOne(dtype, bounds.back(), random_);
  for (size_t r = 0; r < runs; ++r) {
    std::vector<size_t> cells;
    for (uint64_t i = bounds[r]; i < bounds[r + 1]; ++i) cells.push_back(i);
    PlaceAnySpecials(dtype, r, cells, values);
  }
  const TypedArray data = Array(dtype, values);
  ASSERT_TRUE(RunsPassTakes({dtype, kNeeds}, 4));
  std::vector<Stats> first;
  for (const Passes* passes : RunnablePasses()) {
    std::vector<Stats> got(runs);
    passes->add_runs(dtype, kNeeds, data.bytes.data(), bounds.data(), 0, runs, got.data());
    std::string failures;
    for (size_t r = 0; r < runs && failures.size() < 2000; ++r) {
      const std::vector<double> own(values.begin() + bounds[r], values.begin() + bounds[r + 1]);
      failures += CheckProducts(dtype, own, got[r], absl::StrCat("run ", r, " (", own.size(), ")"));
      if (!IsInteger(dtype)) {
        EXPECT_EQ(got[r].first_nan, r % 7 == 2 ? 0 : -1) << "run " << r;
      }
    }
    EXPECT_EQ(failures, "");
    if (first.empty()) first = got;
    for (size_t r = 0; r < runs; ++r) {
      EXPECT_TRUE(testing::SameStatsBits(first[r], got[r])) << "run " << r << ": bits differ";
    }
  }
}

TEST_P(ProductsTest, ColumnsMatchTheReferenceWithTheSameBitsInEveryCopyAndLoop) {
  const DType dtype = GetParam();
  const size_t element = DTypeSize(dtype);
  for (size_t rows : {1, 2, 5, 6, 7, 13, 150}) {
    for (size_t cols : {1, 7, 33, 200}) {
      SCOPED_TRACE(absl::StrCat("(", rows, ", ", cols, ")"));
      // Rows `cols` apart, and a page or more apart (column_chunks.h's groups).
      const size_t paged = std::max(cols, kPageBytes / element + 3);
      std::vector<double> values = NearOne(dtype, rows * paged, random_);
      for (size_t c = 0; c < cols; ++c) {
        std::vector<size_t> cells;
        for (size_t r = 0; r < rows; ++r) cells.push_back(r * paged + c);
        PlaceAnySpecials(dtype, c, cells, values);
      }
      const TypedArray wide = Array(dtype, values);
      std::vector<double> compact_values(rows * cols);
      for (size_t r = 0; r < rows; ++r) {
        std::copy_n(values.begin() + r * paged, cols, compact_values.begin() + r * cols);
      }
      const TypedArray compact = Array(dtype, compact_values);
      std::vector<Stats> first;
      for (const Passes* passes : RunnablePasses()) {
        for (const auto& [table, stride] : {std::pair{&compact, cols}, std::pair{&wide, paged}}) {
          std::vector<Stats> got(cols, EmptyStats(dtype));
          passes->add_columns(dtype, kNeeds, table->bytes.data(), stride, rows, cols, 0,
                              got.data());
          std::string failures;
          for (size_t c = 0; c < cols && failures.size() < 2000; ++c) {
            std::vector<double> own;
            for (size_t r = 0; r < rows; ++r) own.push_back(compact_values[r * cols + c]);
            failures += CheckProducts(dtype, own, got[c], absl::StrCat("column ", c));
            const auto nan = std::find_if(own.begin(), own.end(), [](double x) { return x != x; });
            const int64_t first_nan = nan == own.end() ? -1 : nan - own.begin();
            if (got[c].first_nan != first_nan) {
              absl::StrAppend(&failures, "column ", c, ": first NaN ", got[c].first_nan,
                              ", expected ", first_nan, "\n");
            }
          }
          EXPECT_EQ(failures, "") << "rows " << stride << " apart";
          if (first.empty()) first = got;
          for (size_t c = 0; c < cols; ++c) {
            EXPECT_TRUE(testing::SameStatsBits(first[c], got[c]))
                << "column " << c << ", rows " << stride << " apart: bits differ";
          }
        }
      }
    }
  }
}

TEST_P(ProductsTest, BlocksMatchTheReferenceWithTheSameBitsInEveryCopy) {
  const DType dtype = GetParam();
  // Each size's specials by its place in the list (its stretch k): the largest, with the large
  // powers of two (k = 12, k % 7 == 5), puts hundreds in each lane, whose partial products then
  // leave float64 unless the pass renormalizes.
  const std::vector<size_t> sizes = {1,   2,    31,   32,   33,   191,   192,
                                     193, 2047, 2048, 2049, 4097, 100003};
  for (size_t k = 0; k < sizes.size(); ++k) {
    const size_t size = sizes[k];
    SCOPED_TRACE(absl::StrCat(size, " elements"));
    std::vector<double> values = NearOne(dtype, size, random_);
    std::vector<size_t> cells(size);
    std::iota(cells.begin(), cells.end(), size_t{0});
    PlaceAnySpecials(dtype, k, cells, values);
    const TypedArray data = Array(dtype, values);
    Stats first;
    bool have_first = false;
    for (const Passes* passes : RunnablePasses()) {
      const Stats got = ReduceBlockWith(*passes, {dtype, kNeeds}, data.bytes, 0);
      EXPECT_EQ(CheckProducts(dtype, values, got, "block"), "");
      if (!have_first) {
        first = got;
        have_first = true;
      }
      EXPECT_TRUE(testing::SameStatsBits(first, got)) << "a copy's bits differ";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryDType, ProductsTest, ::testing::ValuesIn(kAllDTypes),
                         [](const auto& info) { return std::string(DTypeName(info.param)); });

}  // namespace
}  // namespace gpureduce::kernels::cpu
