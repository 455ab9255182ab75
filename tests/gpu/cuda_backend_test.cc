// The CUDA backend alone, without a server: every op at awkward sizes through the staging
// pipeline, chunked and concurrent use, admission waits and cancellation, timing, and flat
// memory. Without a GPU every test is skipped with the reason.

#include "runtime/cuda/cuda_backend.h"

#include <future>
#include <thread>
#include <vector>

#include "common/reduction/op_name.h"
#include "gtest/gtest.h"
#include "kernels/reduce.h"
#include "tests/support/classic_partial.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"

namespace gpureduce::runtime {
namespace {

using gpureduce::Op;
using testing::CheckAgainstReference;
using testing::ComputeReference;

constexpr double kTolerance = 1e-9;  // the cub kernel accumulates sums in float64

std::vector<float> DataFor(Op op, size_t n, uint64_t seed) {
  return op == Op::kProd ? testing::NearOneData(n, seed) : testing::MixedSignData(n, seed);
}

absl::StatusOr<std::unique_ptr<CudaBackend>> MakeBackend(uint32_t staging_buffers = 4,
                                                         uint64_t staging_bytes = 1 << 20) {
  CudaBackendOptions options;
  options.device.staging_buffers = staging_buffers;
  options.device.staging_buffer_bytes = staging_bytes;
  options.device.sessions = 64;
  return CudaBackend::Create(options);
}

// Consumes `data` in chunks of `chunk` elements and finishes, waiting for each step.
absl::StatusOr<gpureduce::Partial> Reduce(Backend& backend, Op op, const std::vector<float>& data,
                                          size_t chunk, BackendTiming* timing = nullptr) {
  absl::StatusOr<std::unique_ptr<ReduceSession>> session =
      backend.Open(RequestSpec{op, backend.default_kernel(), 0, 0});
  if (!session.ok()) return session.status();
  absl::Status consumed;
  for (size_t at = 0; at < data.size() && consumed.ok(); at += chunk) {
    std::promise<absl::Status> done;
    (*session)->Consume(std::span<const float>(data).subspan(at, std::min(chunk, data.size() - at)),
                        [&done](absl::Status status) { done.set_value(status); });
    consumed = done.get_future().get();
  }
  std::promise<absl::StatusOr<gpureduce::Stats>> finished;
  (*session)->Finish([&finished](absl::StatusOr<gpureduce::Stats> partial) {
    finished.set_value(std::move(partial));
  });
  absl::StatusOr<gpureduce::Partial> partial =
      gpureduce::testing::ClassicPartial(op, finished.get_future().get());
  if (timing != nullptr) *timing = (*session)->timing();
  if (!consumed.ok()) return consumed;
  return partial;
}

std::string Check(Op op, const std::vector<float>& data,
                  const absl::StatusOr<gpureduce::Partial>& partial) {
  if (!partial.ok()) return partial.status().ToString();
  absl::StatusOr<gpureduce::ReduceResult> result = gpureduce::Finalize(op, *partial);
  if (!result.ok()) return result.status().ToString();
  return CheckAgainstReference(op, ComputeReference(op, data), result->value, result->index,
                               kTolerance);
}

class CudaBackendTest : public ::testing::TestWithParam<Op> {
 protected:
  void SetUp() override {
    if (absl::StatusOr<int> gpus = VisibleGpuCount(); !gpus.ok()) {
      GTEST_SKIP() << gpus.status().message();
    }
    auto backend = MakeBackend();
    ASSERT_TRUE(backend.ok()) << backend.status();
    backend_ = std::move(*backend);
    ASSERT_TRUE(backend_->SelfCheck().ok());
  }

  std::unique_ptr<CudaBackend> backend_;
};

TEST_P(CudaBackendTest, MatchesTheReferenceAtAwkwardSizes) {
  const Op op = GetParam();
  for (size_t n : {size_t{1}, size_t{2}, size_t{31}, size_t{4097}, size_t{1000003}, size_t{3} << 22,
                   size_t{1} << 24}) {
    const uint64_t seed = testing::FreshSeed();
    SCOPED_TRACE(testing::SeedTrace(seed) + " n=" + std::to_string(n));
    const std::vector<float> data = DataFor(op, n, seed);
    EXPECT_EQ(Check(op, data, Reduce(*backend_, op, data, data.size())), "") << "one chunk";
    EXPECT_EQ(Check(op, data, Reduce(*backend_, op, data, 77777)), "") << "odd chunks";
  }
}

TEST_P(CudaBackendTest, TinyChunksAndTenThousandChunks) {
  const Op op = GetParam();
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  const std::vector<float> small = DataFor(op, 257, seed);
  EXPECT_EQ(Check(op, small, Reduce(*backend_, op, small, 1)), "") << "1-element chunks";
  const std::vector<float> many = DataFor(op, 10000 * 1001, seed + 1);
  EXPECT_EQ(Check(op, many, Reduce(*backend_, op, many, 1001)), "") << "10,000 chunks";
}

TEST_P(CudaBackendTest, NaNInfinityAndTiesFollowNumPy) {
  const Op op = GetParam();
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  std::vector<float> data = DataFor(op, 3000017, seed);
  for (float& x : data) x = std::fmod(x, 100.0f);
  const bool is_min = op == Op::kMin || op == Op::kArgMin;
  data[2900001] = data[1500003] = data[2000000] = is_min ? -500.0f : 500.0f;
  EXPECT_EQ(Check(op, data, Reduce(*backend_, op, data, data.size())), "") << "ties";
  EXPECT_EQ(Check(op, data, Reduce(*backend_, op, data, 1 << 20)), "") << "ties, chunked";
  data[123] = std::numeric_limits<float>::infinity();
  data[2999999] = -std::numeric_limits<float>::infinity();
  EXPECT_EQ(Check(op, data, Reduce(*backend_, op, data, data.size())), "") << "infinities";
  data[2500000] = data[1700000] = std::numeric_limits<float>::quiet_NaN();
  const absl::StatusOr<gpureduce::Partial> nan = Reduce(*backend_, op, data, 1 << 20);
  ASSERT_TRUE(nan.ok()) << nan.status();
  EXPECT_TRUE(std::isnan(nan->value));
  if (gpureduce::OpReturnsIndex(op)) {
    EXPECT_EQ(nan->index, 1700000);
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, CudaBackendTest, ::testing::ValuesIn(gpureduce::kClassicOps),
                         [](const ::testing::TestParamInfo<Op>& info) {
                           return std::string(gpureduce::OpName(info.param));
                         });

class CudaPipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (absl::StatusOr<int> gpus = VisibleGpuCount(); !gpus.ok()) {
      GTEST_SKIP() << gpus.status().message();
    }
  }
};

TEST_F(CudaPipelineTest, ReportsCopyAndKernelTimesAndNoReadBack) {
  auto backend = MakeBackend();
  ASSERT_TRUE(backend.ok()) << backend.status();
  const std::vector<float> data = testing::MixedSignData(1 << 22, testing::FreshSeed());
  BackendTiming timing;
  EXPECT_EQ(Check(Op::kSum, data, Reduce(**backend, Op::kSum, data, data.size(), &timing)), "");
  EXPECT_GT(timing.h2d.count(), 0);
  EXPECT_GT(timing.kernel.count(), 0);
  EXPECT_EQ(timing.d2h.count(), 0) << "the kernels write the result into mapped host memory";
}

TEST_F(CudaPipelineTest, ConcurrentSessionsShareStreamsAndWaitForStagingBuffers) {
  // Two staging buffers for sixteen sessions: most wait for admission, all must be right.
  auto backend = MakeBackend(/*staging_buffers=*/2, /*staging_bytes=*/256 << 10);
  ASSERT_TRUE(backend.ok()) << backend.status();
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  std::vector<std::string> failures(16);
  std::vector<std::chrono::nanoseconds> queued(16);
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      const Op op = gpureduce::kClassicOps[t % 8];
      const std::vector<float> data = DataFor(op, 2000003 + t, seed + t);
      BackendTiming timing;
      failures[t] = Check(op, data, Reduce(**backend, op, data, 300007, &timing));
      queued[t] = timing.queue;
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::string& failure : failures) EXPECT_EQ(failure, "");
  EXPECT_GT(*std::max_element(queued.begin(), queued.end()), std::chrono::nanoseconds(0));
}

TEST_F(CudaPipelineTest, CancelWhileWaitingForAStagingBuffer) {
  auto backend = MakeBackend(/*staging_buffers=*/1, /*staging_bytes=*/64 << 10);
  ASSERT_TRUE(backend.ok()) << backend.status();
  const std::vector<float> busy = testing::MixedSignData(1 << 24, testing::FreshSeed());
  auto first = std::async(std::launch::async, [&] {
    return Check(Op::kSum, busy, Reduce(**backend, Op::kSum, busy, busy.size()));
  });
  auto waiting = (*backend)->Open(RequestSpec{Op::kSum, (*backend)->default_kernel(), 0, 0});
  ASSERT_TRUE(waiting.ok());
  std::promise<absl::Status> consumed;
  (*waiting)->Consume(busy, [&](absl::Status status) { consumed.set_value(status); });
  (*waiting)->Cancel();
  const absl::Status status = consumed.get_future().get();
  EXPECT_TRUE(status.ok() || status.code() == absl::StatusCode::kCancelled) << status;
  std::promise<absl::StatusOr<gpureduce::Stats>> finished;
  (*waiting)->Finish([&](absl::StatusOr<gpureduce::Stats> p) { finished.set_value(p); });
  EXPECT_TRUE(finished.get_future().get().ok());
  EXPECT_EQ(first.get(), "");
}

TEST_F(CudaPipelineTest, MemoryStaysFlatOverAHundredRequests) {
  auto backend = MakeBackend();
  ASSERT_TRUE(backend.ok()) << backend.status();
  const std::vector<float> data = testing::MixedSignData(3000017, testing::FreshSeed());
  size_t free_before = 0, free_after = 0, total = 0;
  // Every op once first: CUDA loads a kernel's module on its first launch (lazy loading, about
  // 2 MiB of device memory), which the loop below must not count as growth.
  for (Op op : gpureduce::kClassicOps) {
    ASSERT_EQ(Reduce(**backend, op, data, 1 << 20).status(), absl::OkStatus());
  }
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(Check(gpureduce::kClassicOps[i % 8], data,
                    Reduce(**backend, gpureduce::kClassicOps[i % 8], data, 1 << 20)),
              "");
  }
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  EXPECT_EQ(free_before, free_after) << "device memory changed across 100 requests";
}

TEST_F(CudaPipelineTest, AnEmptyRequestFinishesWithNothingCounted) {
  auto backend = MakeBackend();
  ASSERT_TRUE(backend.ok()) << backend.status();
  const absl::StatusOr<gpureduce::Partial> partial = Reduce(**backend, Op::kSum, {}, 1);
  ASSERT_TRUE(partial.ok()) << partial.status();
  EXPECT_EQ(partial->count, 0u);
}

}  // namespace
}  // namespace gpureduce::runtime
