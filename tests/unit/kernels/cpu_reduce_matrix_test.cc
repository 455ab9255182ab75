// The `cpu` kernel's matrix: every dtype x every op (FinalizeOp over the Stats of
// kernels::cpu::Reduce) against the independent reference, at awkward sizes, with NaN and
// infinities at the start, the middle and the end. Each op is checked from a request of its own
// (only its accumulations gathered) and from one request of all ops at once.

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common/reduction/op_name.h"
#include "common/reduction/op_result.h"
#include "gtest/gtest.h"
#include "kernels/reduce.h"
#include "tests/support/random_data.h"
#include "tests/unit/kernels/stats_reference.h"
#include "tests/unit/kernels/typed_array.h"

namespace gpureduce::kernels::cpu {
namespace {

using testing::TypedArray;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
// Several tasks and an odd tail.
constexpr size_t kSeveralTasks = 3 * kElementsPerTask + 17;

bool TakesDdof(Op op) { return NanFormOf(op) == Op::kVar || NanFormOf(op) == Op::kStd; }

// Every op over `array`, each alone and all in one request; the failures, one a line.
std::string CheckEveryOp(ThreadPool& pool, const TypedArray& array) {
  std::string failures;
  const Stats all = Reduce(pool, {array.dtype, NeedsOf(kAllOps)}, array.bytes);
  for (Op op : kAllOps) {
    const Op alone[] = {op};
    const Stats own = Reduce(pool, {array.dtype, NeedsOf(alone)}, array.bytes);
    for (double ddof : {0.0, 1.0}) {
      if (ddof != 0 && !TakesDdof(op)) continue;
      const testing::Expected expected = testing::ReferenceOf(op, array, ddof);
      for (const Stats* stats : {&own, &all}) {
        const std::string error =
            testing::CheckResult(expected, FinalizeOp(op, array.dtype, ddof, *stats));
        if (error.empty()) continue;
        failures += std::string(OpName(op)) + (ddof != 0 ? " ddof=1" : "") +
                    (stats == &own ? " alone: " : " among all ops: ") + error + "\n";
      }
    }
  }
  return failures;
}

class CpuReduceMatrixTest : public ::testing::TestWithParam<DType> {
 protected:
  ThreadPool pool_{4};
};

TEST_P(CpuReduceMatrixTest, EveryOpMatchesTheReferenceAtAwkwardSizes) {
  for (size_t n : {size_t{1}, size_t{2}, size_t{31}, size_t{1000003}, kSeveralTasks}) {
    const uint64_t seed = testing::FreshSeed();
    SCOPED_TRACE(testing::SeedTrace(seed) + " n=" + std::to_string(n));
    EXPECT_EQ(CheckEveryOp(pool_, testing::RandomArray(GetParam(), n, seed)), "");
  }
}

// Every length of the lanes' tails and of the extremes' runs, at a block offset other than 0.
TEST_P(CpuReduceMatrixTest, EveryTailLengthMatchesTheReference) {
  for (size_t n = 1; n <= 50; ++n) {
    const uint64_t seed = testing::FreshSeed();
    SCOPED_TRACE(testing::SeedTrace(seed) + " n=" + std::to_string(n));
    const TypedArray array = testing::RandomArray(GetParam(), n, seed);
    EXPECT_EQ(CheckEveryOp(pool_, array), "");
    constexpr uint64_t kBase = 1000003;
    const Stats stats = Reduce(pool_, {GetParam(), NeedsOf(kAllOps)}, array.bytes, kBase);
    const testing::Expected argmin = testing::ReferenceOf(Op::kArgMin, array, 0);
    EXPECT_EQ(stats.min_index, argmin.index + static_cast<int64_t>(kBase));
  }
}

TEST_P(CpuReduceMatrixTest, NanAndInfinityAtTheStartTheMiddleAndTheEnd) {
  if (IsInteger(GetParam())) GTEST_SKIP() << "integers have no NaN or infinity";
  for (size_t n : {size_t{31}, kSeveralTasks}) {
    const size_t middle = n / 2 + 3;  // in a later task than the first, for the larger n
    for (size_t at : {size_t{0}, middle, n - 1}) {
      for (double special : {kNan, kInf, -kInf}) {
        const uint64_t seed = testing::FreshSeed();
        SCOPED_TRACE(testing::SeedTrace(seed) + " n=" + std::to_string(n) +
                     " at=" + std::to_string(at) + " value=" + std::to_string(special));
        TypedArray array = testing::RandomArray(GetParam(), n, seed);
        array.Set(at, special);
        EXPECT_EQ(CheckEveryOp(pool_, array), "");
        // A second special of another kind later: NaN first wins the arg ops, inf - inf is NaN.
        array.Set(n - 1 - (at == n - 1 ? n / 3 : 0), std::isnan(special) ? kInf : -special);
        EXPECT_EQ(CheckEveryOp(pool_, array), "");
      }
    }
  }
}

TEST_P(CpuReduceMatrixTest, AllNanInputs) {
  if (IsInteger(GetParam())) GTEST_SKIP() << "integers have no NaN";
  for (size_t n : {size_t{1}, size_t{31}, kElementsPerTask + 5}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const std::vector<double> nans(n, kNan);
    EXPECT_EQ(CheckEveryOp(pool_, testing::FromValues(GetParam(), nans)), "");
  }
}

TEST_P(CpuReduceMatrixTest, EmptyInputAnswersAsNumpy) {
  EXPECT_EQ(CheckEveryOp(pool_, testing::FromValues(GetParam(), {})), "");
}

INSTANTIATE_TEST_SUITE_P(EveryDType, CpuReduceMatrixTest, ::testing::ValuesIn(kAllDTypes),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return std::string(DTypeName(info.param));
                         });

}  // namespace
}  // namespace gpureduce::kernels::cpu
