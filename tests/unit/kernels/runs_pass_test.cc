// The short runs pass (kernels/cpu/runs_pass.cc) through every copy this CPU runs: runs of every
// length it takes (and the shorter ones it can), each against the independent reference over that
// run alone for every op it serves (all but the products: products_test.cc) and dtype (floats,
// integers), with NaN (in the last few elements the lanes pad too, and whole runs of it),
// infinities, ties and -0 beside 0, int32's extremes at runs' ends, placed in runs; the extremes,
// their first indices and the NaN counts equal to the columns pass's; every variant of the ops'
// needs; every copy gives the same bits.

#include <bit>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/reduction/op_name.h"
#include "gtest/gtest.h"
#include "kernels/cpu/block_reduce.h"
#include "kernels/reduce.h"
#include "tests/support/random_data.h"
#include "tests/unit/kernels/runs_data.h"
#include "tests/unit/kernels/stats_bits.h"
#include "tests/unit/kernels/stats_reference.h"
#include "tests/unit/kernels/typed_array.h"

namespace gpureduce::kernels::cpu {
namespace {

using testing::TypedArray;

TEST(RunsPassTest, EveryCopyMatchesTheReferenceAndTheColumnsPassWithTheSameBits) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 random(seed);
  const std::vector<Op> all = OpsWithoutProducts();
  // Every copy of the needs the pass compiles: sums alone, each extreme alone, both, the
  // moments with and without them, squares (with everything).
  const std::vector<std::vector<Op>> sets = {{Op::kSum, Op::kNanMean}, {Op::kMin, Op::kNanArgMin},
                                             {Op::kMax, Op::kArgMax},  {Op::kMin, Op::kMax},
                                             {Op::kVar, Op::kNanStd},  {Op::kVar, Op::kArgMin},
                                             {Op::kSumSquares},        all};
  for (DType dtype : kRunsDTypes) {
    const std::vector<uint64_t> bounds = Bounds(random);
    const TypedArray data = Runs(dtype, bounds, random);
    const size_t runs = bounds.size() - 1;
    for (const std::vector<Op>& ops : sets) {
      SCOPED_TRACE(absl::StrCat(DTypeName(dtype), ", ", OpName(ops.front()), " and ",
                                ops.size() - 1, " more"));
      const StatsNeeds needs = NeedsOf(ops);
      if (!RunsPassTakes({dtype, needs}, kShortestRun)) continue;  // int64's squares
      std::vector<Stats> first;
      for (const Passes* passes : RunnablePasses()) {
        std::vector<Stats> got(runs);
        for (size_t r0 = 0; r0 < runs; r0 += 50) {  // calls of 50 runs, as the callers make
          // From the call's first element, as the segments' callers give it.
          passes->add_runs(dtype, needs, data.bytes.data() + bounds[r0] * DTypeSize(dtype),
                           bounds.data() + r0, bounds[r0], std::min<size_t>(50, runs - r0),
                           got.data() + r0);
        }
        std::string failures;
        for (size_t r = 0; r < runs && failures.size() < 2000; ++r) {
          const uint64_t from = bounds[r], length = bounds[r + 1] - from;
          const TypedArray own =
              IsInteger(dtype)
                  ? testing::FromInts(dtype,
                                      std::span<const int64_t>(data.ints).subspan(from, length))
                  : testing::FromValues(dtype,
                                        std::span<const double>(data.values).subspan(from, length));
          for (Op op : ops) {
            const std::string error = testing::CheckResult(testing::ReferenceOf(op, own, 1),
                                                           FinalizeOp(op, dtype, 1, got[r]));
            if (!error.empty()) {
              failures +=
                  absl::StrCat("run ", r, " (", length, ") ", OpName(op), ": ", error, "\n");
            }
          }
          // The columns pass's run, as a column of one: the same extremes, indices and NaN.
          std::vector<Stats> column(1, EmptyStats(dtype));
          passes->add_columns(dtype, needs, data.bytes.data() + from * DTypeSize(dtype), 1, length,
                              1, 0, column.data());
          const Stats& c = column[0];
          const auto bits = [](double x) { return std::bit_cast<uint64_t>(x); };
          // (Each extreme compared where it is asked: the columns pass finds only those.)
          const bool min_differs =
              needs.min && (got[r].min_index != c.min_index || bits(got[r].min) != bits(c.min) ||
                            got[r].int_min != c.int_min);
          const bool max_differs =
              needs.max && (got[r].max_index != c.max_index || bits(got[r].max) != bits(c.max) ||
                            got[r].int_max != c.int_max);
          if (got[r].count != c.count || got[r].nan_count != c.nan_count ||
              got[r].first_nan != c.first_nan || min_differs || max_differs) {
            failures += absl::StrCat(
                "run ", r, " (", length, "): count, NaN, first NaN, extremes' indices and values ",
                got[r].count, " ", got[r].nan_count, " ", got[r].first_nan, " ", got[r].min_index,
                " ", got[r].max_index, " ", got[r].min, " ", got[r].max, ", the columns pass's ",
                c.count, " ", c.nan_count, " ", c.first_nan, " ", c.min_index, " ", c.max_index,
                " ", c.min, " ", c.max, "\n");
          }
        }
        EXPECT_EQ(failures, "");
        if (first.empty()) {
          first = got;
          continue;
        }
        for (size_t r = 0; r < runs; ++r) {
          EXPECT_TRUE(testing::SameStatsBits(first[r], got[r]))
              << "run " << r << ": a copy's bits differ";
        }
      }
    }
  }
}

// float64 runs' sums are compensated, as ReduceBlock's: two values of 2^60 of opposite sign among
// small integers, anywhere in the run, leave the small ones' sum exactly (a plain sum in lanes
// loses those added to the large ones' lanes). 13 runs a call: eight at once, then one at a time.
TEST(RunsPassTest, Float64SumsAreCompensated) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 random(seed);
  constexpr size_t kRuns = 13;
  for (const uint64_t length : std::vector<uint64_t>{4, 9, 16, 63, 72, 128, 200, 511, 512}) {
    std::vector<double> values(kRuns * length);
    std::vector<uint64_t> bounds = {0};
    std::vector<double> exact(kRuns);
    for (size_t r = 0; r < kRuns; ++r) {
      double* run = values.data() + r * length;
      for (uint64_t e = 0; e < length; ++e) {
        run[e] = static_cast<double>(static_cast<int64_t>(random() % 201) - 100);
      }
      const uint64_t big = random() % length;
      const uint64_t cancel = (big + 1 + random() % (length - 1)) % length;
      run[big] = 0x1p60;
      run[cancel] = -0x1p60;
      for (uint64_t e = 0; e < length; ++e) {
        if (e != big && e != cancel) exact[r] += run[e];
      }
      bounds.push_back(bounds.back() + length);
    }
    const StatsNeeds needs = NeedsOf(std::vector<Op>{Op::kSum});
    for (const Passes* passes : RunnablePasses()) {
      std::vector<Stats> got(kRuns);
      passes->add_runs(DType::kFloat64, needs, reinterpret_cast<const std::byte*>(values.data()),
                       bounds.data(), 0, kRuns, got.data());
      for (size_t r = 0; r < kRuns; ++r) {
        const absl::StatusOr<OpResult> sum = FinalizeOp(Op::kSum, DType::kFloat64, 1, got[r]);
        ASSERT_TRUE(sum.ok()) << sum.status();
        EXPECT_EQ(sum->value, exact[r]) << "length " << length << ", run " << r;
      }
    }
  }
}

// Moments of runs far from 0 with a small spread, their first element an outlier or NaN (skipped
// for the NAN forms), each length eight at once and one alone: VAR, NANVAR and NANSTD as the
// reference's, for every copy (a one-pass form, s2 - s1 * s1 / n, about 0 or a NaN first element
// fails here; about the first valid element it passed, but lost on runs of 16).
TEST(RunsPassTest, MomentsOfRunsFarFromZeroKeepTheirPrecision) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 random(seed);
  constexpr size_t kRuns = 9;
  const std::vector<Op> ops = {Op::kVar, Op::kNanVar, Op::kNanStd};
  for (const DType dtype : {DType::kFloat32, DType::kInt32, DType::kFloat16}) {
    const bool integer = IsInteger(dtype);
    const double offset = dtype == DType::kFloat32 ? 0x1p20 : integer ? 0x1p30 : 1024.0;
    const double step = dtype == DType::kFloat32 ? 1.0 / 8 : 1.0;  // (float32: 2^20 + k / 8)
    for (const uint64_t length : std::vector<uint64_t>{4, 16, 31, 128, 512}) {
      SCOPED_TRACE(absl::StrCat(DTypeName(dtype), ", runs of ", length));
      std::vector<double> values;
      std::vector<uint64_t> bounds = {0};
      for (size_t r = 0; r < kRuns; ++r) {
        for (uint64_t e = 0; e < length; ++e) {
          values.push_back(offset + step * static_cast<double>(random() % 16));
        }
        double& first = values[values.size() - length];
        if (r % 3 == 1) first = offset + step * 1000;
        if (r % 3 == 2 && !integer) first = NAN;
        bounds.push_back(values.size());
      }
      std::vector<int64_t> ints(values.begin(), values.end());
      const TypedArray data =
          integer ? testing::FromInts(dtype, ints) : testing::FromValues(dtype, values);
      for (const Passes* passes : RunnablePasses()) {
        std::vector<Stats> got(kRuns);
        passes->add_runs(dtype, NeedsOf(ops), data.bytes.data(), bounds.data(), 0, kRuns,
                         got.data());
        for (size_t r = 0; r < kRuns; ++r) {
          const uint64_t from = bounds[r];
          const TypedArray own =
              integer ? testing::FromInts(dtype,
                                          std::span<const int64_t>(data.ints).subspan(from, length))
                      : testing::FromValues(
                            dtype, std::span<const double>(data.values).subspan(from, length));
          for (Op op : ops) {
            EXPECT_EQ(testing::CheckResult(testing::ReferenceOf(op, own, 1),
                                           FinalizeOp(op, dtype, 1, got[r])),
                      "")
                << "run " << r << ", " << OpName(op);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace gpureduce::kernels::cpu
