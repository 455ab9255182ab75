// The short runs pass's answers (answer_runs, kernels/cpu/runs_answers.cc) through every copy this
// CPU runs: for every op and dtype it takes, and requests of several ops, over runs of every
// length (runs_data.h: NaN, whole runs of it, infinities, ties, -0 beside 0), the bytes it writes
// equal EncodeAnswers's from the Stats add_runs gives the same runs, bit for bit, for several
// ddof; it answers every whole eight runs where it has vectors for them (the AVX-512 copy), up to
// eight that hold a run an op refuses (NANARGMIN of NaN alone), and none elsewhere.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/reduction/answer_encoding.h"
#include "common/reduction/op_name.h"
#include "common/reduction/op_result.h"
#include "gtest/gtest.h"
#include "kernels/cpu/block_reduce.h"
#include "kernels/reduce.h"
#include "tests/support/random_data.h"
#include "tests/unit/kernels/answers_differ.h"
#include "tests/unit/kernels/runs_data.h"

namespace gpureduce::kernels::cpu {
namespace {

// One op at a time (the products too: alone, the pass takes them), then requests of several:
// the five-op request, NaN forms with an arg op and the moments, SUM_SQUARES beside them, and
// every op at once.
std::vector<std::vector<Op>> OpSets() {
  std::vector<std::vector<Op>> sets = {{Op::kProd}, {Op::kNanProd}};
  for (Op op : OpsWithoutProducts()) sets.push_back({op});
  sets.push_back({Op::kSum, Op::kMin, Op::kMax, Op::kMean, Op::kStd});
  sets.push_back({Op::kNanSum, Op::kNanMin, Op::kArgMax, Op::kVar, Op::kNanMean});
  sets.push_back({Op::kSumSquares, Op::kMax, Op::kNanArgMin, Op::kNanStd, Op::kMean});
  sets.push_back({Op::kArgMin, Op::kNanArgMax});
  sets.push_back(OpsWithoutProducts());
  return sets;
}

TEST(RunsAnswersTest, EveryCopyWritesEncodeAnswersBytes) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 random(seed);
  // RunnablePasses: the baseline, AVX2 and (where the CPU has it) AVX-512 copies.
  const std::vector<const Passes*> copies = RunnablePasses();
  for (DType dtype : kRunsDTypes) {
    const std::vector<uint64_t> bounds = Bounds(random);
    std::vector<TypedArray> sets = {Runs(dtype, bounds, random)};
    if (dtype == DType::kInt64) {  // sums that wrap (left to the Stats), then ones that do not,
      // then those but one, run 20 (the third eight: a call's SUM answers two, then stops)
      std::vector<int64_t> small(sets[0].ints.begin(), sets[0].ints.end());
      for (int64_t& x : small) x >>= 16;
      sets.push_back(testing::FromInts(dtype, small));
      small[bounds[20]] = small[bounds[20] + 1] = INT64_MAX;
      sets.push_back(testing::FromInts(dtype, small));
    }
    for (size_t set = 0; set < sets.size(); ++set) {
      const TypedArray& data = sets[set];
      SCOPED_TRACE(absl::StrCat("data set ", set));
      for (const std::vector<Op>& ops : OpSets()) {
        const bool moments = std::any_of(ops.begin(), ops.end(), [](Op op) {
          return NanFormOf(op) == Op::kVar || NanFormOf(op) == Op::kStd;
        });
        for (const double ddof : {0.0, 1.0, 5.0}) {
          if (ddof != 0 && !moments) continue;
          std::string names;
          for (Op op : ops) absl::StrAppend(&names, OpName(op), " ");
          SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " ", names, "ddof ", ddof));
          if (!RunsPassTakes({dtype, NeedsOf(ops)}, kShortestRun)) continue;
          for (size_t copy = 0; copy < copies.size(); ++copy) {
            SCOPED_TRACE(absl::StrCat("copy ", copy));
            const bool vectors = copy == 2 && AnsweredByVectors(dtype, ops);
            const bool keys = vectors && AnsweredByKeys(dtype, ops);
            EXPECT_EQ(AnswersDiffer(*copies[copy], vectors, keys, dtype, ops, ddof, data, bounds),
                      "");
          }
        }
      }
    }
  }
}

// Runs of `dtype` over `bounds` without NaN: extremes tied across a run, either zero the least or
// greatest (the first one's sign), infinities, the largest finite values, subnormals alone.
TypedArray KeyRuns(DType dtype, const std::vector<uint64_t>& bounds, std::mt19937_64& random) {
  TypedArray data = testing::RandomArray(dtype, bounds.back(), random());
  const double least_subnormal = std::ldexp(1.0, dtype == DType::kFloat16 ? -24 : -133);
  const double largest = dtype == DType::kFloat16 ? 65504.0 : std::ldexp(255.0, 120);
  for (size_t r = 0; r + 1 < bounds.size(); ++r) {
    const uint64_t start = bounds[r], length = bounds[r + 1] - bounds[r];
    const auto at = [&](uint64_t e) { return start + e % length; };
    switch (r % 7) {
      case 1:  // the first element tied across the run
        for (uint64_t e = 3; e < length; e += 5) data.Set(start + e, data.values[start]);
        break;
      case 2:  // either zero the least: -0 first, then 0
      case 3:  // or 0 first
        for (uint64_t e = 0; e < length; ++e) data.Set(start + e, 1.0 + e % 3);
        data.Set(at(length / 3), r % 7 == 2 ? -0.0 : 0.0);
        data.Set(at(length - 1), r % 7 == 2 ? 0.0 : -0.0);
        break;
      case 4:  // and the greatest: every element negative but zeros
        for (uint64_t e = 0; e < length; ++e) data.Set(start + e, -1.0 - e % 3);
        data.Set(at(random()), 0.0);
        data.Set(at(random()), -0.0);
        break;
      case 5:  // infinities and the largest finite values
        data.Set(at(random()), INFINITY);
        data.Set(at(random()), -INFINITY);
        data.Set(at(random()), largest);
        data.Set(at(random()), -largest);
        break;
      case 6:  // subnormals alone (of fewer than 8 significant bits: bfloat16's too)
        for (uint64_t e = 0; e < length; ++e) {
          const double sign = random() % 2 ? -1.0 : 1.0;
          data.Set(start + e, sign * least_subnormal * static_cast<double>(1 + random() % 127));
        }
        break;
      default:
        break;
    }
  }
  return data;
}

// One extreme op over 16-bit floats goes by keys (key_runs.h) in groups of 32 runs: over runs
// without NaN (KeyRuns) of every length the pass takes, of random lengths, and of each length it
// loads 32 runs of whole (4, 8 and 16) and 32, in calls of kRunsACall runs (a last group short),
// every run is answered, and its bytes are EncodeAnswers's (AnswersDiffer).
TEST(RunsAnswersTest, SixteenBitExtremesByKeysAnswerEveryRunWithoutNaN) {
  if (RunnablePasses().size() < 3) GTEST_SKIP() << "no AVX-512 copy on this CPU";
  const Passes& passes = *RunnablePasses().back();
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 random(seed);
  std::vector<std::vector<uint64_t>> layouts(1, {0});
  for (uint64_t length = kShortestRun; length <= kLongestRun; ++length) {
    layouts[0].push_back(layouts[0].back() + length);
  }
  for (int i = 0; i < 300; ++i) {
    layouts[0].push_back(layouts[0].back() + kShortestRun +
                         random() % (kLongestRun - kShortestRun + 1));
  }
  for (const uint64_t length : {4, 8, 16, 32}) {  // 100 runs: three groups whole, then 4 runs
    std::vector<uint64_t>& bounds = layouts.emplace_back(1, 0);
    for (int i = 0; i < 100; ++i) bounds.push_back(bounds.back() + length);
  }
  for (const std::vector<uint64_t>& bounds : layouts) {
    for (const DType dtype : {DType::kFloat16, DType::kBFloat16}) {
      const TypedArray data = KeyRuns(dtype, bounds, random);
      for (const Op op : {Op::kMin, Op::kMax, Op::kArgMin, Op::kArgMax, Op::kNanMin, Op::kNanMax,
                          Op::kNanArgMin, Op::kNanArgMax}) {
        SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " ", OpName(op), ", runs of ",
                                  bounds[1] - bounds[0], " first"));
        // No NaN: AnsweredOf asks for every run of each call.
        EXPECT_EQ(AnswersDiffer(passes, true, true, dtype, {op}, 0.0, data, bounds), "");
      }
    }
  }
}

// A group of 32 runs that holds a NaN goes by the float64 lanes, as does the rest of the call
// (AnsweredOf): NaNs of either sign and any payload, in runs of each length the key path loads
// whole (so that path meets them first) and of mixed lengths, answered as EncodeAnswers answers
// them, the runs not answered untouched.
TEST(RunsAnswersTest, SixteenBitExtremesByKeysLeaveGroupsWithNaNToTheLanes) {
  if (RunnablePasses().size() < 3) GTEST_SKIP() << "no AVX-512 copy on this CPU";
  const Passes& passes = *RunnablePasses().back();
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 random(seed);
  std::vector<std::vector<uint64_t>> layouts;
  for (const uint64_t length : {4, 8, 16, 0}) {  // 0: random lengths
    std::vector<uint64_t>& bounds = layouts.emplace_back(1, 0);
    for (int i = 0; i < 100; ++i) {
      bounds.push_back(bounds.back() +
                       (length > 0 ? length : kShortestRun + random() % (kLongestRun - 3)));
    }
  }
  for (const DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    const std::vector<uint16_t> nans =
        dtype == DType::kFloat16 ? std::vector<uint16_t>{0x7c01, 0xfc01, 0x7fff, 0xffff, 0xfe00}
                                 : std::vector<uint16_t>{0x7f81, 0xff81, 0x7fff, 0xffff, 0xffc0};
    for (const std::vector<uint64_t>& bounds : layouts) {
      for (size_t k = 0; k < nans.size(); ++k) {
        TypedArray data = KeyRuns(dtype, bounds, random);
        // In the first call's first group of 32 and the second call's (calls of kRunsACall).
        for (const auto& [run, bits] :
             {std::pair{size_t{10}, nans[k]}, std::pair{size_t{60}, nans[(k + 1) % nans.size()]}}) {
          const uint64_t at = bounds[run] + (k + run) % (bounds[run + 1] - bounds[run]);
          data.values[at] = NAN;
          std::memcpy(data.bytes.data() + 2 * at, &bits, 2);
        }
        for (const Op op : {Op::kMin, Op::kMax, Op::kArgMin, Op::kArgMax, Op::kNanMin, Op::kNanMax,
                            Op::kNanArgMin, Op::kNanArgMax}) {
          SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " ", OpName(op), ", NaN bits ", nans[k],
                                    ", runs of ", bounds[1] - bounds[0], " first"));
          EXPECT_EQ(AnswersDiffer(passes, true, true, dtype, {op}, 0.0, data, bounds), "");
        }
      }
    }
  }
}

// float16 and bfloat16 answers are rounded once from float64 (the AVX-512 copy goes through
// float32 rounded to odd): sums and means that fall a hair past a tie, on ties, at the largest
// finite value and among the subnormals, each a run of eight (unrolled, SharedGroups).
TEST(RunsAnswersTest, SixteenBitAnswersRoundOnceFromFloat64) {
  const double tiny = std::ldexp(1.0, -20);
  const double half_least = std::ldexp(1.0, -24);     // float16's least subnormal
  const double bfloat_least = std::ldexp(1.0, -133);  // bfloat16's
  const double bfloat_most = std::ldexp(255.0, 120);  // bfloat16's largest finite
  const std::vector<std::vector<double>> halves = {{2048, 1, tiny},
                                                   {2048, 1},
                                                   {2048, 3},
                                                   {-2048, -1, -tiny},
                                                   {65504, 16},
                                                   {65504, 8},
                                                   {1, std::ldexp(1.0, -11), std::ldexp(1.0, -22)},
                                                   {5 * half_least},
                                                   {4 * half_least},
                                                   {12 * half_least},
                                                   {INFINITY, -INFINITY},
                                                   {NAN, 1}};
  const std::vector<std::vector<double>> bfloats = {{256, 1, tiny},
                                                    {256, 1},
                                                    {256, 3},
                                                    {-256, -1, -tiny},
                                                    {bfloat_most, std::ldexp(1.0, 119)},
                                                    {bfloat_most, std::ldexp(1.0, 118)},
                                                    {5 * bfloat_least},
                                                    {4 * bfloat_least},
                                                    {12 * bfloat_least},
                                                    {INFINITY, -INFINITY},
                                                    {NAN, 1}};
  if (RunnablePasses().size() < 3) GTEST_SKIP() << "no AVX-512 copy on this CPU";
  const Passes& passes = *RunnablePasses().back();
  for (const DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    const std::vector<std::vector<double>>& cases = dtype == DType::kFloat16 ? halves : bfloats;
    std::vector<double> values;
    std::vector<uint64_t> bounds = {0};
    for (size_t r = 0; r < 16; ++r) {  // two batches of eight runs
      std::vector<double> run = cases[r % cases.size()];
      run.resize(8, 0.0);
      values.insert(values.end(), run.begin(), run.end());
      bounds.push_back(values.size());
    }
    const TypedArray data = testing::FromValues(dtype, values);
    for (Op op : {Op::kSum, Op::kMean, Op::kNanSum, Op::kNanMean}) {
      SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " ", OpName(op)));
      std::vector<std::byte> got(16 * 2), want(16 * 2);
      DirectAnswers direct;
      direct.Add(op, got.data());
      ASSERT_EQ(passes.answer_runs(dtype, direct, 0, data.bytes.data(), bounds.data(), 0, 16), 16u);
      std::vector<Stats> stats(16);
      passes.add_runs(dtype, NeedsOf(std::vector<Op>{op}), data.bytes.data(), bounds.data(), 0, 16,
                      stats.data());
      ASSERT_TRUE(EncodeAnswers(op, dtype, 0, stats, want.data()).status.ok());
      for (size_t r = 0; r < 16; ++r) {
        EXPECT_EQ(std::memcmp(got.data() + 2 * r, want.data() + 2 * r, 2), 0) << "run " << r;
      }
      if (op == Op::kSum) {  // the first run's sum rounds up, past the tie: 2050, 258
        uint16_t first;
        std::memcpy(&first, want.data(), 2);
        EXPECT_EQ(first, dtype == DType::kFloat16 ? 0x6801 : 0x4381);
      }
    }
  }
}

}  // namespace
}  // namespace gpureduce::kernels::cpu
