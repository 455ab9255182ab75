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
#include "tests/unit/kernels/runs_data.h"

namespace gpureduce::kernels::cpu {
namespace {

constexpr size_t kRunsACall = 50;  // as runs_pass_test: calls of 50 runs, eight at a time and six

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

// How many of a call's `count` runs the AVX-512 copy answers (`vectors`): eight at a time up to
// the first eight that hold a refused run; by keys (`keys`), every run of the groups of 32 before
// the first that holds a NaN, then eight at a time likewise.
size_t AnsweredOf(bool vectors, bool keys, size_t count, size_t refused, size_t first_nan) {
  if (!vectors) return 0;
  if (!keys || first_nan < count) {
    const size_t from = keys ? first_nan / 32 * 32 : 0;
    return from + (refused - from) / 8 * 8;
  }
  return count;
}

// Whether the pass answers `op`'s outputs of `dtype` that left int64 itself where it has a counter
// for them (DirectAnswer::overflows): integers' PROD (int_product_answers.h), not int64's SUM.
bool CountsOverflows(Op op, DType dtype) { return IsInteger(dtype) && NanFormOf(op) == Op::kProd; }

// What `passes` answers for `ops` over the runs, against EncodeAnswers's bytes from the Stats
// add_runs gives them, calls of kRunsACall runs (their answers at their own outputs: answer_runs's
// `first`); how many it answers too, and the answers that left int64 it counted (`counters`: each
// op has a counter; without, none has and such answers are left to the Stats). The differences,
// one a line.
std::string AnswersDiffer(const Passes& passes, bool vectors, bool keys, DType dtype,
                          const std::vector<Op>& ops, double ddof, const TypedArray& data,
                          const std::vector<uint64_t>& bounds, bool counters = true) {
  const size_t runs = bounds.size() - 1;
  std::vector<std::vector<std::byte>> got(ops.size());
  std::vector<std::atomic<uint64_t>> counted(ops.size());
  std::vector<uint64_t> want_counted(ops.size());
  DirectAnswers direct;
  direct.ddof = ddof;
  for (size_t k = 0; k < ops.size(); ++k) {
    got[k].assign(runs * DTypeSize(ResultDType(ops[k], dtype)), std::byte{0xa5});
    direct.Add(ops[k], got[k].data(), counters ? &counted[k] : nullptr);
  }
  const StatsNeeds needs = NeedsOf(ops);
  std::string failures;
  for (size_t r0 = 0; r0 < runs && failures.size() < 2000; r0 += kRunsACall) {
    const size_t count = std::min(kRunsACall, runs - r0);
    const std::byte* from = data.bytes.data() + bounds[r0] * DTypeSize(dtype);
    const size_t wrote =
        passes.answer_runs(dtype, direct, r0, from, bounds.data() + r0, bounds[r0], count);
    std::vector<Stats> stats(count);
    passes.add_runs(dtype, needs, from, bounds.data() + r0, bounds[r0], count, stats.data());
    // Each run's bytes; the pass stops before eight runs one of which an op refuses, or whose
    // integer answer left int64 and is not counted (int64's SUM, and PROD without a counter: the
    // Stats count it).
    std::vector<std::vector<std::byte>> want(ops.size());
    std::vector<std::vector<uint64_t>> overflows(ops.size(), std::vector<uint64_t>(count));
    size_t refused = count;
    for (size_t k = 0; k < ops.size(); ++k) {
      const size_t size = DTypeSize(ResultDType(ops[k], dtype));
      want[k].resize(count * size);
      for (size_t r = 0; r < count; ++r) {
        const std::span<const Stats> one(&stats[r], 1);
        const EncodedAnswers answers =
            EncodeAnswers(ops[k], dtype, ddof, one, want[k].data() + r * size);
        overflows[k][r] = answers.overflows;
        if (!answers.status.ok() ||
            (answers.overflows > 0 && !(counters && CountsOverflows(ops[k], dtype)))) {
          refused = std::min(refused, r);
        }
      }
    }
    size_t first_nan = count;
    for (size_t r = 0; r < count && first_nan == count; ++r) {
      if (stats[r].nan_count > 0) first_nan = r;
    }
    if (wrote != AnsweredOf(vectors, keys, count, refused, first_nan)) {
      failures += absl::StrCat("runs from ", r0, ": ", wrote, " answered of ", refused,
                               " before a refusal (the first NaN in run ", r0 + first_nan, ")\n");
    }
    for (size_t k = 0; k < ops.size(); ++k) {
      const size_t size = DTypeSize(ResultDType(ops[k], dtype));
      for (size_t r = 0; r < wrote; ++r) want_counted[k] += overflows[k][r];
      for (size_t r = 0; r < wrote && failures.size() < 2000; ++r) {
        if (std::memcmp(got[k].data() + (r0 + r) * size, want[k].data() + r * size, size) != 0) {
          failures += absl::StrCat("run ", r0 + r, " (", bounds[r0 + r + 1] - bounds[r0 + r],
                                   " elements): its ", OpName(ops[k]),
                                   " bytes differ from EncodeAnswers's\n");
        }
      }
      // The runs it did not answer are untouched, every op's (the caller's Stats answer them).
      for (size_t r = wrote; r < count && failures.size() < 2000; ++r) {
        const std::byte* place = got[k].data() + (r0 + r) * size;
        if (std::any_of(place, place + size, [](std::byte b) { return b != std::byte{0xa5}; })) {
          failures += absl::StrCat("run ", r0 + r, ": its ", OpName(ops[k]),
                                   " answer written though the call did not answer it\n");
        }
      }
    }
  }
  for (size_t k = 0; k < ops.size(); ++k) {
    if (counted[k].load() != want_counted[k]) {
      absl::StrAppend(&failures, "its ", OpName(ops[k]), " counted ", counted[k].load(),
                      " answers that left int64 of ", want_counted[k], " answered\n");
    }
  }
  return failures;
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
