// SmallBatcher and BatchedSession (issue 23, item 4) on the CPU's kernels, whose calls a gate can
// hold to stand for a GPU that is busy: every request's answer against the independent reference
// of its own elements, from many threads, every dtype and mixed ops (one batch's accumulations
// are the union of its requests'); and the batching rules: a lone request goes at once, requests
// gather while `in_flight` batches run and go together when one lands, a full batch goes at
// once, the window ends a wait, the destructor launches what is open and waits for it.

#include "runtime/batching/small_batcher.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <future>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/reduction/op_name.h"
#include "common/reduction/op_result.h"
#include "common/thread_pool.h"
#include "gtest/gtest.h"
#include "runtime/backend_factory.h"
#include "runtime/batching/batched_session.h"
#include "tests/support/random_data.h"
#include "tests/unit/kernels/stats_reference.h"
#include "tests/unit/kernels/typed_array.h"

namespace gpureduce::runtime {
namespace {

using testing::TypedArray;
using namespace std::chrono_literals;

// The CPU's kernels, each Segments call held while the gate is closed; `max_segments` as asked.
class GatedKernels final : public BlockKernels {
 public:
  GatedKernels(ThreadPool& pool, uint64_t max_segments) : cpu_(pool), max_segments_(max_segments) {}

  uint64_t max_piece_bytes() const override { return 1 << 20; }
  uint64_t max_segments() const override { return max_segments_; }
  uint64_t max_direct_row(DType) const override { return 0; }

  void Segments(const kernels::cpu::StatsRequest& request, std::span<const std::byte> data,
                std::span<const uint64_t> bounds, SegmentsDone done) override {
    std::unique_lock<std::mutex> lock(mu_);
    ++calls_;
    sizes_.push_back(bounds.size() - 1);
    called_.notify_all();
    if (closed_) {
      held_.push_back([this, request, data, bounds, done = std::move(done)]() mutable {
        cpu_.Segments(request, data, bounds, std::move(done));
      });
      return;
    }
    lock.unlock();
    cpu_.Segments(request, data, bounds, std::move(done));
  }
  void Columns(const kernels::cpu::StatsRequest&, std::span<const std::byte>, uint64_t,
               std::span<Stats>, uint64_t, ColumnsDone done) override {
    std::move(done)(absl::InternalError("unused"), {});
  }
  void Rows(const kernels::cpu::StatsRequest&, std::span<const std::byte>, uint64_t,
            kernels::cpu::RowSink, kernels::cpu::DirectAnswers, RowsDone done) override {
    std::move(done)(absl::InternalError("unused"), {});
  }

  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  // Opens the gate and runs what it held.
  void Open() {
    std::vector<absl::AnyInvocable<void() &&>> held;
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = false;
      held.swap(held_);
    }
    for (auto& call : held) std::move(call)();
  }
  // Waits until `calls` Segments calls were made (or 5 s passed); the number made.
  size_t WaitForCalls(size_t calls) {
    std::unique_lock<std::mutex> lock(mu_);
    called_.wait_for(lock, 5s, [&] { return calls_ >= calls; });
    return calls_;
  }
  std::vector<uint64_t> sizes() {
    std::lock_guard<std::mutex> lock(mu_);
    return sizes_;
  }

 private:
  CpuBlockKernels cpu_;
  const uint64_t max_segments_;
  std::mutex mu_;
  std::condition_variable called_;
  bool closed_ = false;
  size_t calls_ = 0;
  std::vector<uint64_t> sizes_;
  std::vector<absl::AnyInvocable<void() &&>> held_;
};

// Opens the gate when it goes: declared after the batcher, so a test that ends early (a failed
// ASSERT) never leaves the batcher's destructor waiting on held batches.
struct OpenOnExit {
  GatedKernels& kernels;
  ~OpenOnExit() { kernels.Open(); }
};

std::string Check(std::span<const Op> ops, const TypedArray& array,
                  const absl::StatusOr<Stats>& stats) {
  if (!stats.ok()) return stats.status().ToString();
  std::string failures;
  for (Op op : ops) {
    const std::string error = testing::CheckResult(testing::ReferenceOf(op, array, 1),
                                                   FinalizeOp(op, array.dtype, 1, *stats));
    if (!error.empty()) absl::StrAppend(&failures, OpName(op), ": ", error, "; ");
  }
  return failures;
}

// A promise of one request's answer.
struct Answer {
  std::promise<std::pair<absl::StatusOr<Stats>, BatchTiming>> promise;
  SmallBatcher::ItemDone Done() {
    return [this](absl::StatusOr<Stats> stats, BatchTiming timing) {
      promise.set_value({std::move(stats), timing});
    };
  }
};

TEST(SmallBatcherTest, EveryRequestFromManyThreadsGetsItsOwnAnswer) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  ThreadPool pool(3);
  GatedKernels kernels(pool, 64);
  std::atomic<int> failures{0};
  {
    SmallBatcher batcher(kernels, {.window = 200us, .max_request_bytes = 1 << 16, .in_flight = 1});
    const std::vector<std::vector<Op>> op_sets = {
        {Op::kSum}, {Op::kMin, Op::kArgMax}, {Op::kVar, Op::kNanMean}, {Op::kProd, Op::kMax}};
    std::vector<std::thread> threads;
    for (int t = 0; t < 6; ++t) {
      threads.emplace_back([&, t] {
        std::mt19937_64 random(seed + t);
        for (int i = 0; i < 150; ++i) {
          const DType dtype = kAllDTypes[random() % std::size(kAllDTypes)];
          const std::vector<Op>& ops = op_sets[random() % op_sets.size()];
          const TypedArray array = testing::RandomArray(dtype, 1 + random() % 2000, random());
          Answer answer;
          auto got = answer.promise.get_future();
          batcher.Add(dtype, NeedsOf(ops), array.bytes, answer.Done());
          const auto [stats, timing] = got.get();
          const std::string error = Check(ops, array, stats);
          if (!error.empty() && failures.fetch_add(1) < 10) {
            ADD_FAILURE() << DTypeName(dtype) << " of " << array.size() << ": " << error;
          }
          EXPECT_GE(timing.batch_size, 1u);
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    const BatchCounts counts = batcher.counts();
    EXPECT_EQ(counts.requests, 6u * 150u);
    EXPECT_LE(counts.batches, counts.requests);
  }
  EXPECT_EQ(failures.load(), 0);
}

TEST(SmallBatcherTest, RequestsGatherWhileABatchRunsAndGoTogetherWhenItLands) {
  ThreadPool pool(2);
  GatedKernels kernels(pool, 1000);
  SmallBatcher batcher(kernels, {.window = 10s, .max_request_bytes = 1 << 16, .in_flight = 1});
  OpenOnExit open_on_exit{kernels};
  kernels.Close();
  std::vector<Answer> answers(11);
  std::vector<TypedArray> arrays;
  for (int i = 0; i < 11; ++i) {
    arrays.push_back(testing::RandomArray(DType::kFloat32, 10 + i, testing::FreshSeed()));
  }
  batcher.Add(DType::kFloat32, NeedsOf(std::vector<Op>{Op::kSum}), arrays[0].bytes,
              answers[0].Done());
  ASSERT_EQ(kernels.WaitForCalls(1), 1u);  // a lone request goes at once
  for (int i = 1; i < 11; ++i) {
    batcher.Add(DType::kFloat32, NeedsOf(std::vector<Op>{Op::kSum}), arrays[i].bytes,
                answers[i].Done());
  }
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(kernels.WaitForCalls(1), 1u);  // the others wait for it to land
  kernels.Open();
  for (int i = 0; i < 11; ++i) {
    const auto [stats, timing] = answers[i].promise.get_future().get();
    EXPECT_EQ(Check(std::vector<Op>{Op::kSum}, arrays[i], stats), "") << i;
    EXPECT_EQ(timing.batch_size, i == 0 ? 1u : 10u) << i;
  }
  EXPECT_EQ(kernels.sizes(), (std::vector<uint64_t>{1, 10}));
}

TEST(SmallBatcherTest, AFullBatchGoesAtOnceAndTheWindowEndsAWait) {
  ThreadPool pool(2);
  GatedKernels kernels(pool, 4);
  auto batcher = std::make_unique<SmallBatcher>(
      kernels, BatchOptions{.window = 30ms, .max_request_bytes = 1 << 16, .in_flight = 1});
  OpenOnExit open_on_exit{kernels};
  kernels.Close();
  std::vector<Answer> answers(10);
  const TypedArray array = testing::RandomArray(DType::kInt32, 33, testing::FreshSeed());
  const std::vector<Op> ops = {Op::kSum, Op::kMax};
  for (int i = 0; i < 10; ++i)
    batcher->Add(DType::kInt32, NeedsOf(ops), array.bytes, answers[i].Done());
  // The first alone (nothing ran), then two full batches of 4; the last one waits...
  EXPECT_EQ(kernels.WaitForCalls(3), 3u);
  // ...until the window ends it, though a batch still runs.
  EXPECT_EQ(kernels.WaitForCalls(4), 4u);
  EXPECT_EQ(kernels.sizes(), (std::vector<uint64_t>{1, 4, 4, 1}));
  kernels.Open();
  for (Answer& answer : answers) {
    EXPECT_EQ(Check(ops, array, answer.promise.get_future().get().first), "");
  }
}

TEST(SmallBatcherTest, TheDestructorLaunchesWhatIsOpenAndWaitsForIt) {
  ThreadPool pool(2);
  GatedKernels kernels(pool, 1000);
  std::vector<Answer> answers(3);
  const TypedArray array = testing::RandomArray(DType::kFloat64, 5, testing::FreshSeed());
  size_t launched_before_open = 0;
  std::thread opener;
  {
    SmallBatcher batcher(kernels, {.window = 10s, .max_request_bytes = 1 << 16, .in_flight = 1});
    kernels.Close();
    for (Answer& answer : answers) {
      batcher.Add(DType::kFloat64, {.sum = true}, array.bytes, answer.Done());
    }
    // The gate opens only once the destructor below has launched the open batch (the window is
    // 10 s, and the first batch cannot land before the gate opens).
    opener = std::thread([&] {
      launched_before_open = kernels.WaitForCalls(2);
      kernels.Open();
    });
    EXPECT_EQ(kernels.WaitForCalls(1), 1u);
  }
  opener.join();
  EXPECT_EQ(launched_before_open, 2u);
  EXPECT_EQ(kernels.sizes(), (std::vector<uint64_t>{1, 2}));
  for (Answer& answer : answers) {
    EXPECT_EQ(Check(std::vector<Op>{Op::kSum}, array, answer.promise.get_future().get().first), "");
  }
}

TEST(BatchedSessionTest, AnswersItsRequestFromItsBatch) {
  ThreadPool pool(2);
  CpuBlockKernels kernels(pool);
  SmallBatcher batcher(kernels, {});
  const TypedArray array = testing::RandomArray(DType::kFloat16, 1001, testing::FreshSeed());
  RequestSpec spec{Op::kSum, kernels::KernelId::kSinglePass, 0, 0};
  spec.op_list = {Op::kSum, Op::kNanArgMin, Op::kStd};
  spec.dtype = DType::kFloat16;
  BatchedSession session(batcher, spec, "test GPU", 3);
  PayloadPieces pieces;
  pieces.set_element_bytes(2);
  pieces.Append(array.bytes.data(), 600);  // a message in two slices
  pieces.Append(array.bytes.data() + 600, array.bytes.size() - 600);
  std::promise<absl::Status> consumed;
  session.ConsumePieces(pieces, [&](absl::Status status) { consumed.set_value(status); });
  ASSERT_TRUE(consumed.get_future().get().ok());
  std::promise<absl::StatusOr<Stats>> finished;
  session.Finish([&](absl::StatusOr<Stats> stats) { finished.set_value(std::move(stats)); });
  EXPECT_EQ(Check(spec.op_list, array, finished.get_future().get()), "");
  EXPECT_EQ(session.devices(), std::vector<int>{3});
  EXPECT_EQ(session.kernel(), kernels::KernelId::kSinglePass);
}

// Through the CUDA backend with --batch-small-requests (skipped without a GPU): concurrent small
// unary single_pass requests of every dtype answered right, every one of them from a batch.
TEST(BatchedSessionTest, ACudaBackendAnswersConcurrentSmallRequestsFromBatches) {
  BackendOptions options;
  options.kind = BackendChoice::kCuda;
  options.worker_threads = 2;
  options.batch_small_requests = true;
  options.auto_cpu_below_bytes = 0;
  absl::StatusOr<std::unique_ptr<Backend>> backend = CreateBackend(options);
  if (!backend.ok()) GTEST_SKIP() << "no usable GPU: " << backend.status();
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 random(seed + t);
      for (int i = 0; i < 100; ++i) {
        const DType dtype = kAllDTypes[random() % std::size(kAllDTypes)];
        const TypedArray array = testing::RandomArray(dtype, 1 + random() % 3000, random());
        RequestSpec spec{Op::kSum, kernels::KernelId::kSinglePass, 0, 0};
        spec.op_list = {Op::kSum, Op::kMin, Op::kArgMax, Op::kVar};
        spec.dtype = dtype;
        spec.size_hint = array.size();
        spec.one_message = true;
        absl::StatusOr<std::unique_ptr<ReduceSession>> session = (*backend)->Open(spec);
        ASSERT_TRUE(session.ok()) << session.status();
        PayloadPieces pieces;
        pieces.set_element_bytes(DTypeSize(dtype));
        pieces.Append(array.bytes.data(), array.bytes.size());
        std::promise<absl::Status> consumed;
        (*session)->ConsumePieces(pieces, [&](absl::Status s) { consumed.set_value(s); });
        ASSERT_TRUE(consumed.get_future().get().ok());
        std::promise<absl::StatusOr<Stats>> finished;
        (*session)->Finish([&](absl::StatusOr<Stats> s) { finished.set_value(std::move(s)); });
        const std::string error = Check(spec.op_list, array, finished.get_future().get());
        if (!error.empty() && failures.fetch_add(1) < 10) ADD_FAILURE() << error;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  const std::vector<DeviceUsage> usage = (*backend)->Usage();
  uint64_t batches = 0, batched = 0;
  for (const DeviceUsage& device : usage) {
    batches += device.batches;
    batched += device.batched_requests;
  }
  EXPECT_EQ(batched, 800u);
  EXPECT_LE(batches, batched);
  std::printf("800 requests in %llu batches\n", static_cast<unsigned long long>(batches));
}

}  // namespace
}  // namespace gpureduce::runtime
