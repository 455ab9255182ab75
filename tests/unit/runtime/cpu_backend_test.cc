// The CPU backend through the runtime's public API, as the server uses it: the factory, the
// self-check, and sessions that reduce chunk after chunk into one answer.

#include <algorithm>
#include <future>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/backend_factory.h"
#include "tests/support/classic_partial.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"

namespace gpureduce::runtime {
namespace {

using gpureduce::Op;
using ::testing::HasSubstr;

std::unique_ptr<Backend> CpuBackend(uint32_t threads) {
  BackendOptions options;
  options.kind = BackendChoice::kCpu;
  options.worker_threads = threads;
  absl::StatusOr<std::unique_ptr<Backend>> backend = CreateBackend(options);
  EXPECT_TRUE(backend.ok()) << backend.status();
  return backend.ok() ? std::move(*backend) : nullptr;
}

// Consumes `data` in chunks of `chunk` elements, waiting for each, then finishes.
absl::StatusOr<gpureduce::Partial> Reduce(Backend& backend, Op op, std::span<const float> data,
                                          size_t chunk) {
  absl::StatusOr<std::unique_ptr<ReduceSession>> session =
      backend.Open(RequestSpec{op, backend.default_kernel(), 0, 0});
  if (!session.ok()) return session.status();
  for (size_t at = 0; at < data.size(); at += chunk) {
    std::promise<absl::Status> consumed;
    (*session)->Consume(data.subspan(at, std::min(chunk, data.size() - at)),
                        [&](absl::Status status) { consumed.set_value(status); });
    if (absl::Status status = consumed.get_future().get(); !status.ok()) return status;
  }
  std::promise<absl::StatusOr<gpureduce::Stats>> finished;
  (*session)->Finish(
      [&](absl::StatusOr<gpureduce::Stats> stats) { finished.set_value(std::move(stats)); });
  return gpureduce::testing::ClassicPartial(op, finished.get_future().get());
}

// A stream's chunk (one_message false) of four tasks is reduced on the thread that consumes it;
// a unary request's (one_message true) of the same size spreads over the idle pool.
TEST(CpuBackendTest, AStreamsChunkIsReducedWhereItArrivesAndAUnaryRequestOnThePool) {
  std::unique_ptr<Backend> backend = CpuBackend(2);
  ASSERT_NE(backend, nullptr);
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  const std::vector<float> data = testing::MixedSignData(size_t{1} << 18, seed);  // 1 MiB
  for (const bool one_message : {false, true}) {
    SCOPED_TRACE(one_message ? "unary" : "stream");
    RequestSpec spec{Op::kSum, backend->default_kernel(), 0, 0};
    spec.one_message = one_message;
    spec.size_hint = one_message ? data.size() : 0;
    absl::StatusOr<std::unique_ptr<ReduceSession>> session = backend->Open(spec);
    ASSERT_TRUE(session.ok()) << session.status();
    std::promise<std::thread::id> consumed_on;
    (*session)->Consume(data, [&](absl::Status status) {
      EXPECT_TRUE(status.ok()) << status;
      consumed_on.set_value(std::this_thread::get_id());
    });
    const std::thread::id on = consumed_on.get_future().get();
    if (one_message) {
      EXPECT_NE(on, std::this_thread::get_id());
    } else {
      EXPECT_EQ(on, std::this_thread::get_id());
    }
    std::promise<absl::StatusOr<gpureduce::Stats>> finished;
    (*session)->Finish(
        [&](absl::StatusOr<gpureduce::Stats> stats) { finished.set_value(std::move(stats)); });
    absl::StatusOr<gpureduce::Partial> partial =
        gpureduce::testing::ClassicPartial(Op::kSum, finished.get_future().get());
    ASSERT_TRUE(partial.ok()) << partial.status();
    absl::StatusOr<gpureduce::ReduceResult> result = gpureduce::Finalize(Op::kSum, *partial);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(testing::CheckAgainstReference(Op::kSum, testing::ComputeReference(Op::kSum, data),
                                             result->value, result->index, 1e-9),
              "");
  }
}

TEST(CpuBackendTest, DescribesItselfAndPassesItsSelfCheck) {
  std::unique_ptr<Backend> backend = CpuBackend(3);
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->kind(), kernels::BackendKind::kCpu);
  EXPECT_EQ(backend->default_kernel(), kernels::KernelId::kCpu);
  EXPECT_EQ(backend->workers(), 3u);
  ASSERT_EQ(backend->devices().size(), 1u);
  EXPECT_FALSE(backend->devices()[0].name.empty());
  ASSERT_EQ(backend->Kernels().size(), 1u);
  EXPECT_EQ(backend->Kernels()[0]->name, "cpu");
  EXPECT_TRUE(backend->SelfCheck().ok());
}

TEST(CpuBackendTest, ChunkedSessionsMatchTheReferenceForEveryOp) {
  std::unique_ptr<Backend> backend = CpuBackend(2);
  ASSERT_NE(backend, nullptr);
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  for (size_t n : {size_t{1}, size_t{2}, size_t{31}, size_t{1000003}}) {
    for (Op op : gpureduce::kClassicOps) {
      std::vector<float> data =
          op == Op::kProd ? testing::NearOneData(n, seed + n) : testing::MixedSignData(n, seed + n);
      if (op == Op::kArgMin || op == Op::kArgMax) {
        // The extreme again at the end, a chunk or more later: the first occurrence must win.
        const auto extreme = op == Op::kArgMin ? std::min_element(data.begin(), data.end())
                                               : std::max_element(data.begin(), data.end());
        data.back() = *extreme;
      }
      // Chunks of 65537 elements: every task boundary falls inside a chunk at a new offset.
      absl::StatusOr<gpureduce::Partial> partial = Reduce(*backend, op, data, 65537);
      ASSERT_TRUE(partial.ok()) << partial.status();
      absl::StatusOr<gpureduce::ReduceResult> result = gpureduce::Finalize(op, *partial);
      ASSERT_TRUE(result.ok()) << result.status();
      EXPECT_EQ(testing::CheckAgainstReference(op, testing::ComputeReference(op, data),
                                               result->value, result->index, 1e-9),
                "")
          << gpureduce::OpName(op) << " n=" << n;
      EXPECT_EQ(result->count, n);
    }
  }
}

TEST(CpuBackendTest, TheFactoryStartsItForTheCpuChoiceWithOnlyTheCpuKernel) {
  std::unique_ptr<Backend> backend = CpuBackend(1);
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->kind(), kernels::BackendKind::kCpu);
  std::vector<std::string> names;
  for (const kernels::KernelInfo* kernel : backend->Kernels()) names.push_back(kernel->name);
  EXPECT_EQ(names, std::vector<std::string>{"cpu"});
}

}  // namespace
}  // namespace gpureduce::runtime
