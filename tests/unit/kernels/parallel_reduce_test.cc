// The CPU backend's kernel against the float64 reference: every op, awkward sizes, fresh data.

#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/finalize.h"
#include "kernels/op_name.h"
#include "kernels/reduce.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"

namespace gpureduce::kernels::cpu {
namespace {

using testing::CheckAgainstReference;
using testing::ComputeReference;

constexpr double kDefaultKernelTolerance = 1e-9;  // DESIGN.md: float64 accumulation
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

INSTANTIATE_TEST_SUITE_P(AllOps, ParallelReduceTest, ::testing::ValuesIn(kAllOps),
                         [](const ::testing::TestParamInfo<Op>& info) {
                           return std::string(OpName(info.param));
                         });

TEST(ParallelReduceAccuracy, SumOf2To28MixedSignFloatsIsWithin1e9OfReference) {
  // The default kernels' contract (DESIGN.md): float64 accumulation, 1e-9 x sum(|x|), where
  // float32 accumulation would be off by about 1e-6.
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  const std::vector<float> data = testing::MixedSignData(size_t{1} << 28, seed);
  ThreadPool pool(0);
  EXPECT_EQ(Check(pool, Op::kSum, data), "");
}

}  // namespace
}  // namespace gpureduce::kernels::cpu
