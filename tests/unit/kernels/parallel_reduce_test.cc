// The `cpu` kernel's task structure (kernels/reduce.h): fixed tasks merged in order, so results
// do not depend on the thread count; block sources and their failures; the caller's thread for
// one task; indices in the whole array; the accuracy contract of docs/cpu-backend.md.

#include <chrono>
#include <cmath>
#include <cstring>
#include <future>
#include <optional>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "common/reduction/op_name.h"
#include "common/reduction/op_result.h"
#include "gtest/gtest.h"
#include "kernels/cpu/block_reduce.h"
#include "kernels/reduce.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"
#include "tests/unit/kernels/stats_bits.h"
#include "tests/unit/kernels/typed_array.h"

namespace gpureduce::kernels::cpu {
namespace {

constexpr size_t kSeveralTasks = 3 * kElementsPerTask + 17;

TEST(ParallelReduceTest, ResultIsIndependentOfThreadCount) {
  ThreadPool one(1), four(4);
  for (DType dtype : kAllDTypes) {
    const uint64_t seed = testing::FreshSeed();
    SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + testing::SeedTrace(seed));
    const testing::TypedArray array = testing::RandomArray(dtype, kSeveralTasks, seed);
    const StatsRequest request{dtype, NeedsOf(kAllOps)};
    EXPECT_TRUE(testing::SameStatsBits(Reduce(one, request, array.bytes),
                                       Reduce(four, request, array.bytes)));
  }
}

// The instruction sets' copies of the passes give the same bits (the lanes are the source's),
// over several of the sums pass's 8192-element chunks: a NaN in the third (its chunk again with
// the masks), +inf and -inf in one lane of the fifth (every chunk after it with the masks).
TEST(ParallelReduceTest, EveryInstructionSetGivesTheSameBits) {
  for (DType dtype : kAllDTypes) {
    const uint64_t seed = testing::FreshSeed();
    SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + testing::SeedTrace(seed));
    testing::TypedArray array = testing::RandomArray(dtype, 6 * 8192 + 4099, seed);
    if (!IsInteger(dtype)) {
      array.Set(2 * 8192 + 77, NAN);
      array.Set(4 * 8192 + 16, INFINITY);
      array.Set(4 * 8192 + 32, -INFINITY);
    }
    std::vector<StatsNeeds> requests = {NeedsOf(kAllOps)};
    for (const Op op : kAllOps) requests.push_back(NeedsOf(std::span<const Op>(&op, 1)));
    for (const StatsNeeds& needs : requests) {
      const StatsRequest request{dtype, needs};
      const Stats expected = ReduceBlockWith(baseline::kPasses, request, array.bytes, 5);
      for (const Passes& passes : EveryPassesPath()) {
        EXPECT_TRUE(
            testing::SameStatsBits(expected, ReduceBlockWith(passes, request, array.bytes, 5)));
      }
    }
  }
}

// Indices count from base_index: a block reduced as part of a larger array reports its place.
TEST(ParallelReduceTest, IndicesCountFromTheBaseIndex) {
  ThreadPool pool(2);
  std::vector<double> values(kSeveralTasks, 1.0);
  values[kElementsPerTask + 9] = -2;
  values[2 * kElementsPerTask + 1] = 5;
  values[kElementsPerTask + 20] = NAN;
  const testing::TypedArray array = testing::FromValues(DType::kFloat64, values);
  const Stats stats = Reduce(pool, {DType::kFloat64, NeedsOf(kAllOps)}, array.bytes, 1000);
  EXPECT_EQ(stats.min_index, 1000 + static_cast<int64_t>(kElementsPerTask) + 9);
  EXPECT_EQ(stats.max_index, 1000 + 2 * static_cast<int64_t>(kElementsPerTask) + 1);
  EXPECT_EQ(stats.first_nan, 1000 + static_cast<int64_t>(kElementsPerTask) + 20);
  EXPECT_EQ(stats.nan_count, 1u);
  EXPECT_EQ(stats.count, kSeveralTasks);
}

TEST(ParallelReduceTest, OneTaskRunsOnTheCallersThreadAndEmptyInputToo) {
  ThreadPool pool(2);
  const testing::TypedArray array = testing::RandomArray(DType::kInt32, kElementsPerTask, 1);
  for (std::span<const std::byte> data :
       {std::span<const std::byte>(array.bytes), std::span<const std::byte>()}) {
    bool called = false;
    std::thread::id caller;
    ReduceAsync(pool, {DType::kInt32, NeedsOf(kAllOps)}, data, 0,
                [&](absl::StatusOr<Stats> stats, ReduceTiming) {
                  called = true;
                  caller = std::this_thread::get_id();
                  ASSERT_TRUE(stats.ok());
                  EXPECT_EQ(stats->count, data.size() / 4);
                  EXPECT_TRUE(stats->integer);
                });
    EXPECT_TRUE(called);
    EXPECT_EQ(caller, std::this_thread::get_id());
  }
}

// While every worker is busy (a task waits), a request of a few tasks runs on its caller, to the
// same bits as on an idle pool; a larger one still goes to the pool.
TEST(ParallelReduceTest, ABusyPoolsCallerRunsAFewTasksItself) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  const StatsRequest request{DType::kFloat32, NeedsOf(kAllOps)};
  const testing::TypedArray few = testing::RandomArray(DType::kFloat32, kElementsPerTask + 5, seed);
  const testing::TypedArray many =
      testing::RandomArray(DType::kFloat32, 6 * kElementsPerTask, seed);
  std::optional<Stats> got;
  std::thread::id ran_on;
  std::promise<Stats> later;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  // Declared after what their tasks use: on the way out (a failed ASSERT too) the workers are
  // released first, then the pools drain while it is all still there.
  ThreadPool busy(2), idle(2);
  auto unblock = absl::MakeCleanup([&] { release.set_value(); });
  for (int i = 0; i < 3; ++i) busy.Submit([released] { released.wait(); });
  ASSERT_GT(busy.backlog(), 0u);  // two workers blocked, the third task waiting

  ReduceAsync(busy, request, few.bytes, 0, [&](absl::StatusOr<Stats> stats, ReduceTiming) {
    ASSERT_TRUE(stats.ok());
    got = *stats;
    ran_on = std::this_thread::get_id();
  });
  ASSERT_TRUE(got.has_value()) << "two tasks on a busy pool must not wait for it";
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_TRUE(testing::SameStatsBits(*got, Reduce(idle, request, few.bytes)));
  long double sum = 0, magnitude = 0;  // an independent reference
  for (const double v : few.values) {
    sum += v;
    magnitude += std::fabs(v);
  }
  EXPECT_NEAR(got->sum, static_cast<double>(sum), 1e-12 * static_cast<double>(magnitude));
  EXPECT_EQ(got->count, few.values.size());

  // Six tasks, more than a caller takes on: queued behind the blocked workers until released.
  ReduceAsync(busy, request, many.bytes, 0,
              [&](absl::StatusOr<Stats> stats, ReduceTiming) { later.set_value(*stats); });
  std::future<Stats> result = later.get_future();
  EXPECT_EQ(result.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  std::move(unblock).Invoke();
  EXPECT_TRUE(testing::SameStatsBits(result.get(), Reduce(idle, request, many.bytes)));
}

// A stream's chunk (FewTasks::kCaller) of up to kMostCallerBytes is reduced by its caller even
// on an idle pool, to the pool's bits; one element more goes to the pool.
TEST(ParallelReduceTest, AStreamsChunkOfAFewTasksIsReducedByItsCaller) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  for (const DType dtype : {DType::kFloat32, DType::kFloat16, DType::kInt64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const StatsRequest request{dtype, NeedsOf(kAllOps)};
    const size_t most = kMostCallerBytes / DTypeSize(dtype);  // four tasks, or two of int64
    const testing::TypedArray few = testing::RandomArray(dtype, most, seed);
    const testing::TypedArray more = testing::RandomArray(dtype, most + 1, seed);
    ThreadPool pool(2);
    ASSERT_EQ(pool.backlog(), 0u);
    std::optional<Stats> got;
    std::thread::id ran_on;
    ReduceAsync(
        pool, request, few.bytes, 0,
        [&](absl::StatusOr<Stats> stats, ReduceTiming) {
          ASSERT_TRUE(stats.ok());
          got = *stats;
          ran_on = std::this_thread::get_id();
        },
        FewTasks::kCaller);
    ASSERT_TRUE(got.has_value()) << "a stream's chunk of 1 MiB must not wait for the pool";
    EXPECT_EQ(ran_on, std::this_thread::get_id());
    EXPECT_TRUE(testing::SameStatsBits(*got, Reduce(pool, request, few.bytes)));
    EXPECT_EQ(got->count, few.values.size());
    if (!IsInteger(dtype)) {
      long double sum = 0, magnitude = 0;  // an independent reference
      for (const double v : few.values) {
        sum += v;
        magnitude += std::fabs(v);
      }
      // Any float64 summation order is within (n - 1) units of rounding of sum |x|; twice that
      // covers the reference's own rounding too.
      EXPECT_NEAR(got->sum, static_cast<double>(sum),
                  2 * few.values.size() * 0x1p-53 * static_cast<double>(magnitude));
    }

    std::promise<std::thread::id> more_ran_on;
    ReduceAsync(
        pool, request, more.bytes, 0,
        [&](absl::StatusOr<Stats>, ReduceTiming) {
          more_ran_on.set_value(std::this_thread::get_id());
        },
        FewTasks::kCaller);
    EXPECT_NE(more_ran_on.get_future().get(), std::this_thread::get_id())
        << "a byte over 1 MiB spreads over the pool, whoever asks";
  }
}

// A source is read block by block from the tasks; the first block that fails, in task order,
// is the result, and a block of the wrong length is refused rather than misread.
TEST(ParallelReduceTest, BlockSourceFailuresComeBackInTaskOrder) {
  ThreadPool pool(4);
  const testing::TypedArray array = testing::RandomArray(DType::kFloat16, kSeveralTasks, 2);
  const StatsRequest request{DType::kFloat16, NeedsOf(kAllOps)};
  const auto run = [&](BlockSource source) {
    std::promise<absl::StatusOr<Stats>> result;
    ReduceAsync(pool, request, kSeveralTasks, std::move(source), 0,
                [&](absl::StatusOr<Stats> stats, ReduceTiming) { result.set_value(stats); });
    return result.get_future().get();
  };
  const std::span<const std::byte> bytes(array.bytes);
  const absl::StatusOr<Stats> whole = run([&](uint64_t begin, size_t size) {
    return absl::StatusOr<std::span<const std::byte>>(bytes.subspan(begin * 2, size * 2));
  });
  ASSERT_TRUE(whole.ok());
  EXPECT_TRUE(testing::SameStatsBits(*whole, Reduce(pool, request, bytes)));

  const absl::StatusOr<Stats> failed =
      run([&](uint64_t begin, size_t size) -> absl::StatusOr<std::span<const std::byte>> {
        if (begin > 0) return absl::DataLossError("block " + std::to_string(begin));
        return bytes.subspan(begin * 2, size * 2);
      });
  const size_t second = TaskElements(DType::kFloat16);  // the first failing block
  EXPECT_EQ(failed.status(), absl::DataLossError("block " + std::to_string(second)));

  const absl::StatusOr<Stats> short_block =
      run([&](uint64_t begin, size_t size) -> absl::StatusOr<std::span<const std::byte>> {
        return bytes.subspan(begin * 2, size * 2 - 2);
      });
  EXPECT_EQ(short_block.status().code(), absl::StatusCode::kInternal);
}

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
  const testing::Reference reference = testing::ComputeReference(Op::kSum, data);
  float lanes[8] = {};
  for (size_t i = 0; i < data.size(); ++i) lanes[i % 8] += data[i];
  float float32_sum = 0;
  for (float lane : lanes) float32_sum += lane;
  ASSERT_GT(std::fabs(float32_sum - reference.value), 1e-9 * reference.scale)
      << "float32 accumulation meets the bound too: the case cannot tell them apart";
  ThreadPool pool(2);
  const Op sum[] = {Op::kSum};
  const Stats stats =
      Reduce(pool, {DType::kFloat32, NeedsOf(sum)}, std::as_bytes(std::span<const float>(data)));
  const absl::StatusOr<OpResult> result = FinalizeOp(Op::kSum, DType::kFloat32, 0, stats);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(testing::CheckAgainstReference(Op::kSum, reference, result->unrounded, -1, 1e-9), "");
}

}  // namespace
}  // namespace gpureduce::kernels::cpu
