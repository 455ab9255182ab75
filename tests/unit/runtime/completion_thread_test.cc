// The CUDA completion thread: callbacks run once each, in order, on its one thread; after the
// stream's earlier work where there is a GPU, at once with the error where the callback cannot
// be queued (as on a machine without a GPU).

#include "runtime/cuda/completion_thread.h"

#include <algorithm>
#include <atomic>
#include <future>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace gpureduce::runtime {
namespace {

bool HaveGpu() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}

TEST(CompletionThreadTest, PostedCallbacksRunInOrderOnOneThread) {
  CompletionThread completions;
  std::vector<int> order;
  std::vector<std::thread::id> threads;
  std::promise<void> done;
  for (int i = 0; i < 100; ++i) {
    completions.Post([&, i] {
      order.push_back(i);
      threads.push_back(std::this_thread::get_id());
      if (i == 99) done.set_value();
    });
  }
  done.get_future().get();
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
  for (const std::thread::id& id : threads) EXPECT_EQ(id, threads.front());
  EXPECT_NE(threads.front(), std::this_thread::get_id());
}

TEST(CompletionThreadTest, ACallbackThatCannotBeQueuedRunsOnceWithTheError) {
  if (HaveGpu()) GTEST_SKIP() << "needs a machine where CUDA calls fail (no GPU)";
  CompletionThread completions;
  std::promise<GpuStatus> result;
  int calls = 0;
  completions.RunAfter(nullptr, [&](GpuStatus status) {
    ++calls;
    result.set_value(status);
  });
  EXPECT_NE(result.get_future().get(), kGpuSuccess);
  std::promise<void> drained;
  completions.Post([&] { drained.set_value(); });
  drained.get_future().get();
  EXPECT_EQ(calls, 1);
}

TEST(CompletionThreadTest, CallbacksRunAfterTheStreamsEarlierWork) {
  if (!HaveGpu()) GTEST_SKIP() << "no usable GPU";
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  constexpr size_t kCount = 1 << 24;  // 64 MiB each way: the copies take a while
  float *source = nullptr, *device = nullptr, *target = nullptr;
  ASSERT_EQ(cudaMallocHost(reinterpret_cast<void**>(&source), kCount * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMallocHost(reinterpret_cast<void**>(&target), kCount * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&device), kCount * sizeof(float)), cudaSuccess);
  {
    CompletionThread completions;
    for (int round = 1; round <= 3; ++round) {
      source[kCount - 1] = float(round);
      target[kCount - 1] = 0;  // the previous round's copies are over
      ASSERT_EQ(
          cudaMemcpyAsync(device, source, kCount * sizeof(float), cudaMemcpyHostToDevice, stream),
          cudaSuccess);
      ASSERT_EQ(
          cudaMemcpyAsync(target, device, kCount * sizeof(float), cudaMemcpyDeviceToHost, stream),
          cudaSuccess);
      std::promise<std::pair<GpuStatus, float>> seen;
      completions.RunAfter(stream, [&](GpuStatus status) {
        seen.set_value({status, target[kCount - 1]});
      });
      const auto [status, value] = seen.get_future().get();
      EXPECT_EQ(status, kGpuSuccess);
      EXPECT_EQ(value, float(round)) << "the callback ran before the copy back finished";
    }
  }
  cudaFree(device);
  cudaFreeHost(target);
  cudaFreeHost(source);
  cudaStreamDestroy(stream);
}

TEST(CompletionThreadTest, OneStreamsCallbacksRunInTheOrderTheyWereQueued) {
  // Small copies finish while the thread polls, so a later event is often seen complete before
  // an earlier one was queried again: the order must hold anyway (a request's last callback may
  // free what its earlier ones touch).
  if (!HaveGpu()) GTEST_SKIP() << "no usable GPU";
  cudaStream_t streams[2] = {};
  for (cudaStream_t& stream : streams) {
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  }
  float* host = nullptr;
  float* device = nullptr;
  ASSERT_EQ(cudaMallocHost(reinterpret_cast<void**>(&host), 1 << 20), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&device), 1 << 20), cudaSuccess);
  constexpr int kCallbacks = 20000;
  std::vector<int> order[2];
  std::promise<void> done;
  std::atomic<int> finished{0};
  {
    CompletionThread completions;
    for (int i = 0; i < kCallbacks; ++i) {
      const int s = i % 2;
      ASSERT_EQ(
          cudaMemcpyAsync(device, host, (i % 7 + 1) * 4096, cudaMemcpyHostToDevice, streams[s]),
          cudaSuccess);
      completions.RunAfter(streams[s], [&, s, i](GpuStatus status) {
        EXPECT_EQ(status, kGpuSuccess);
        order[s].push_back(i);
        if (finished.fetch_add(1) + 1 == kCallbacks) done.set_value();
      });
    }
    done.get_future().get();
  }
  for (const std::vector<int>& seen : order) {
    ASSERT_EQ(seen.size(), size_t{kCallbacks / 2});
    EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  }
  cudaFree(device);
  cudaFreeHost(host);
  for (cudaStream_t stream : streams) cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace gpureduce::runtime
