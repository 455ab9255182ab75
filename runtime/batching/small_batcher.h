#pragma once

// Small requests gathered into one segmented launch (issue 23, item 4: the dynamic batcher of
// inference servers, for reductions). Each request's elements are copied into the open batch of
// its dtype; a batch goes to the kernels (BlockKernels::Segments: one Stats per request, the
// union of their accumulations) when it is full, when fewer than `in_flight` batches are running
// (so a lone request waits for nobody), or once its first request has waited `window`; while
// batches run, the requests that arrive gather into the next. Each request gets its own Stats and
// timing. Generic over the kernels: a GPU's (CudaBlockKernels), or the CPU's in tests.

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "common/reduction/dtype.h"
#include "common/reduction/stats.h"
#include "runtime/device_options.h"
#include "runtime/shaped/block_kernels.h"

namespace gpureduce::runtime {

// What a request's time went to in its batch.
struct BatchTiming {
  std::chrono::nanoseconds waited{0};  // added to launched (gathering), then waiting for a slot
  std::chrono::nanoseconds kernel{0};  // its share of the batch's copies and kernel
  uint32_t batch_size = 0;             // requests in its batch
};

// Counters since start, for the metrics.
struct BatchCounts {
  uint64_t batches = 0;
  uint64_t requests = 0;
};

class SmallBatcher {
 public:
  using ItemDone = absl::AnyInvocable<void(absl::StatusOr<gpureduce::Stats>, BatchTiming) &&>;

  // Keeps a reference to `kernels`, which must outlive it.
  SmallBatcher(BlockKernels& kernels, BatchOptions options);
  // Launches what is open and waits until every batch is answered.
  ~SmallBatcher();
  SmallBatcher(const SmallBatcher&) = delete;
  SmallBatcher& operator=(const SmallBatcher&) = delete;

  // Whether a request of `bytes` may be added (at most the options' and the kernels' sizes).
  bool Takes(uint64_t bytes) const;

  // Adds one request's elements (copied now: `data` may go once Add returns); `done` runs once
  // its batch is reduced, with the Stats of its elements (indices from 0), on a kernels'
  // thread or, for a batch launched here, possibly on this one.
  void Add(gpureduce::DType dtype, const gpureduce::StatsNeeds& needs,
           std::span<const std::byte> data, ItemDone done);

  BatchCounts counts() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Batch;

  // Under mu_: takes out the open batches that should go now (all of them with `all`).
  std::vector<std::unique_ptr<Batch>> TakeReady(Clock::time_point now, bool all);
  void Launch(std::unique_ptr<Batch> batch);
  void Landed();  // a batch was answered: its place may start the next
  void TimerLoop();

  BlockKernels& kernels_;
  const BatchOptions options_;
  const uint64_t capacity_bytes_;
  const uint64_t capacity_items_;

  mutable std::mutex mu_;
  std::condition_variable cv_;  // the timer: a batch opened, or stopping
  std::condition_variable landed_cv_;
  std::array<std::unique_ptr<Batch>, 6> open_;  // per dtype
  uint32_t in_flight_ = 0;
  bool stopping_ = false;
  BatchCounts counts_;
  std::thread timer_;  // last: it starts once the state above exists
};

}  // namespace gpureduce::runtime
