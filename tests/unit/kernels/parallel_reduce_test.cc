// The CPU backend's kernel against the float64 reference: every op (each through its
// reduction in op_dispatch.h), awkward sizes, fresh data.

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "common/reduction/finalize.h"
#include "common/reduction/op_name.h"
#include "gtest/gtest.h"
#include "kernels/reduce.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"

namespace gpureduce::kernels::cpu {
namespace {

using testing::CheckAgainstReference;
using testing::ComputeReference;

constexpr double kDefaultKernelTolerance = 1e-9;  // float64 accumulation (README.md)
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> DataFor(Op op, size_t n, uint64_t seed) {
  return op == Op::kProd ? testing::NearOneData(n, seed) : testing::MixedSignData(n, seed);
}

std::string Check(ThreadPool& pool, Op op, const std::vector<float>& data) {
  const absl::StatusOr<ReduceResult> result = Finalize(op, Reduce(pool, op, data));
  if (!result.ok()) return result.status().ToString();
  return CheckAgainstReference(op, ComputeReference(op, data), result->value, result->index,
                               kDefaultKernelTolerance);
}

class ParallelReduceTest : public ::testing::TestWithParam<Op> {
 protected:
  ThreadPool pool_{4};
};

TEST_P(ParallelReduceTest, MatchesReferenceAtAwkwardSizes) {
  const Op op = GetParam();
  for (size_t n : {size_t{1}, size_t{2}, size_t{31}, size_t{32}, size_t{33}, size_t{4097},
                   kElementsPerTask - 1, kElementsPerTask + 1, size_t{1000003}, size_t{1} << 24}) {
    const uint64_t seed = testing::FreshSeed();
    SCOPED_TRACE(testing::SeedTrace(seed) + " n=" + std::to_string(n));
    const std::vector<float> data = DataFor(op, n, seed);
    EXPECT_EQ(Check(pool_, op, data), "");
  }
}

// Every length of the 8-lane loops' tails and of ARGMIN/ARGMAX's runs, on one thread, with the
// block at a position other than 0 of the whole array: indices are reported in the whole array.
TEST_P(ParallelReduceTest, EveryTailLengthAtAnOffsetMatchesTheReference) {
  const Op op = GetParam();
  constexpr uint64_t kBase = 1000003;
  for (size_t n = 1; n <= 41; ++n) {
    const uint64_t seed = testing::FreshSeed();
    SCOPED_TRACE(testing::SeedTrace(seed) + " n=" + std::to_string(n));
    const std::vector<float> data = DataFor(op, n, seed);
    const absl::StatusOr<ReduceResult> result = Finalize(op, Reduce(pool_, op, data, kBase));
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->count, n);
    const int64_t index = OpReturnsIndex(op) ? result->index - int64_t{kBase} : result->index;
    EXPECT_EQ(CheckAgainstReference(op, ComputeReference(op, data), result->value, index,
                                    kDefaultKernelTolerance),
              "");
  }
}

TEST_P(ParallelReduceTest, NaNPropagatesAndArgOpsReturnTheFirstNaN) {
  const Op op = GetParam();
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  std::vector<float> data = DataFor(op, 300001, seed);
  data[200000] = kNaN;  // in a later task than the first
  data[250000] = kNaN;
  const ReduceResult result = *Finalize(op, Reduce(pool_, op, data));
  EXPECT_TRUE(std::isnan(result.value));
  EXPECT_EQ(result.index, OpReturnsIndex(op) ? 200000 : -1);
}

TEST_P(ParallelReduceTest, InfinitiesFollowIeee) {
  const Op op = GetParam();
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  std::vector<float> data = DataFor(op, 100003, seed);
  data[77777] = kInf;
  EXPECT_EQ(Check(pool_, op, data), "") << "one +inf";
  data[99999] = -kInf;
  EXPECT_EQ(Check(pool_, op, data), "") << "+inf and -inf (sum is NaN)";
}

TEST_P(ParallelReduceTest, TiesResolveToTheFirstOccurrence) {
  const Op op = GetParam();
  std::vector<float> data = testing::MixedSignData(3 * kElementsPerTask + 5, testing::FreshSeed());
  for (float& x : data) x = std::fmod(x, 100.0f);  // no value reaches +/-1000
  // The same extreme three times, in three different tasks.
  for (size_t at : {kElementsPerTask + 3, 2 * kElementsPerTask + 1, 3 * kElementsPerTask + 4}) {
    data[at] = (op == Op::kMin || op == Op::kArgMin) ? -1000.0f : 1000.0f;
  }
  EXPECT_EQ(Check(pool_, op, data), "");
  if (OpReturnsIndex(op)) {
    EXPECT_EQ(Finalize(op, Reduce(pool_, op, data))->index,
              static_cast<int64_t>(kElementsPerTask + 3));
  }
}

TEST_P(ParallelReduceTest, SplitAnywhereCombinesToTheWhole) {
  const Op op = GetParam();
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  const std::vector<float> data = DataFor(op, 200003, seed);
  const std::span<const float> all(data);
  for (size_t cut : {size_t{1}, size_t{31}, size_t{65536}, size_t{199999}}) {
    const Partial left = Reduce(pool_, op, all.first(cut), 0);
    const Partial right = Reduce(pool_, op, all.subspan(cut), cut);
    const ReduceResult combined = *Finalize(op, Combine(op, left, right));
    EXPECT_EQ(CheckAgainstReference(op, ComputeReference(op, data), combined.value, combined.index,
                                    kDefaultKernelTolerance),
              "")
        << "cut at " << cut;
  }
}

TEST_P(ParallelReduceTest, ResultIsIndependentOfThreadCount) {
  const Op op = GetParam();
  const std::vector<float> data = DataFor(op, 1000003, testing::FreshSeed());
  ThreadPool one(1);
  const Partial a = Reduce(one, op, data);
  const Partial b = Reduce(pool_, op, data);
  EXPECT_EQ(std::memcmp(&a.value, &b.value, sizeof(double)), 0) << a.value << " vs " << b.value;
  EXPECT_EQ(a.index, b.index);
}

TEST_P(ParallelReduceTest, EmptyInputFollowsTheContract) {
  const Op op = GetParam();
  const absl::StatusOr<ReduceResult> result = Finalize(op, Reduce(pool_, op, {}));
  if (op == Op::kSum || op == Op::kProd) {
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(result->value, op == Op::kSum ? 0.0 : 1.0);
    EXPECT_EQ(result->count, 0u);
  } else {
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(result.status().message().find("empty"), absl::string_view::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, ParallelReduceTest, ::testing::ValuesIn(kClassicOps),
                         [](const ::testing::TestParamInfo<Op>& info) {
                           return std::string(OpName(info.param));
                         });

// The default kernels' accuracy contract (README.md): float64 accumulation keeps a sum within
// 1e-9 x sum(|x|) of the reference. 2^24 floats (64 MiB) of mixed sign and magnitude, three in
// four of them made positive so that the running sums grow: float32 accumulation then loses the
// small elements' low bits, systematically rather than as a random walk that may end near zero.
// The test checks that first (the same 8 lanes summed in float32 miss the bound by about 10^6
// times), so the case can tell float64 accumulation from float32. docs/cpu-backend.md cites it.
TEST(ParallelReduceAccuracy, SumOfMixedSignFloatsIsWithin1e9OfReference) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  std::vector<float> data = testing::MixedSignData((size_t{1} << 24) + 3, seed);
  for (size_t i = 0; i < data.size(); ++i) {
    if (i % 4 != 0) data[i] = std::fabs(data[i]);
  }
  const testing::Reference reference = ComputeReference(Op::kSum, data);
  float lanes[8] = {};
  for (size_t i = 0; i < data.size(); ++i) lanes[i % 8] += data[i];
  float float32_sum = 0;
  for (float lane : lanes) float32_sum += lane;
  ASSERT_GT(std::fabs(float32_sum - reference.value), 1e-9 * reference.scale)
      << "float32 accumulation meets the bound too: the case cannot tell them apart";
  ThreadPool pool(0);
  EXPECT_EQ(Check(pool, Op::kSum, data), "");
}

}  // namespace
}  // namespace gpureduce::kernels::cpu
