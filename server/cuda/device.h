#pragma once

// One GPU as the server owns it: its properties, a pool of streams (each with the CUB scratch
// it needs), the staging pool, per-request partial slots, and the completion thread. Everything
// is allocated at start; the request path allocates no device or pinned memory. Chunks are
// copied into pinned memory on the device's copy threads, so gRPC's threads only hand them over.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/partial.h"
#include "server/backend.h"
#include "server/cuda/completion_thread.h"
#include "server/cuda/cuda_resources.h"
#include "server/cuda/staging_pool.h"

namespace gpureduce::server {

struct DeviceOptions {
  uint32_t streams = 0;                           // 0: twice the copy engines, at least 4
  uint32_t staging_buffers = 16;
  uint64_t staging_buffer_bytes = uint64_t{4} << 20;
  uint32_t sessions = 32;                         // requests in progress on this device at once
  uint32_t copy_threads = 4;                      // threads that copy chunks into pinned memory
};

class Device {
 public:
  // A stream and the CUB scratch that only work on this stream uses. Several requests share a
  // lane: each enqueues a piece's copy, kernels and events under `mu`, so no other request's
  // kernels land between a reduction and the fold that reads its result from the scratch.
  struct Lane {
    std::mutex mu;
    CudaStream stream;
    DeviceMemory scratch;
    size_t scratch_bytes = 0;
  };

  // Where one request keeps its running partial (device) and reads it back (pinned host).
  struct PartialSlot {
    kernels::Partial* device;
    kernels::Partial* host;
    CudaEvent copy_started;
    CudaEvent copy_done;
  };

  static absl::StatusOr<std::unique_ptr<Device>> Open(int index, const DeviceOptions& options);
  ~Device();  // waits for the device's work before its resources go

  const DeviceDescription& description() const { return description_; }
  int index() const { return description_.index; }

  // Makes this the calling thread's current device (any thread may serve any device).
  absl::Status Activate() const;

  Lane& NextLane();  // round robin
  // RESOURCE_EXHAUSTED when `options.sessions` requests already hold one.
  absl::StatusOr<PartialSlot*> AcquirePartial();
  void ReleasePartial(PartialSlot* slot);

  StagingPool& staging() { return *staging_; }
  CompletionThread& completions() { return completions_; }
  kernels::cpu::ThreadPool& copiers() { return *copiers_; }
  uint32_t lanes() const { return static_cast<uint32_t>(lanes_.size()); }

  // Records a failed CUDA call; a sticky error marks the device lost and tells `on_lost`.
  void ReportError(cudaError_t error);
  bool lost() const { return lost_.load(std::memory_order_acquire); }
  void set_on_lost(std::function<void()> on_lost) { on_lost_ = std::move(on_lost); }

 private:
  Device() = default;
  absl::Status Init(int index, const DeviceOptions& options);

  DeviceDescription description_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::atomic<uint32_t> next_lane_{0};
  std::unique_ptr<StagingPool> staging_;
  DeviceMemory device_partials_;
  PinnedMemory host_partials_;
  std::vector<std::unique_ptr<PartialSlot>> partial_slots_;
  std::mutex partial_mu_;
  std::vector<PartialSlot*> free_partials_;
  std::atomic<bool> lost_{false};
  std::function<void()> on_lost_;
  // Declared last, destroyed first: no callback may outlive the state it touches. A copy may
  // queue a completion, so the copiers go before the completion thread.
  CompletionThread completions_;
  std::unique_ptr<kernels::cpu::ThreadPool> copiers_;
};

}  // namespace gpureduce::server
