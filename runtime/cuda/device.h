#pragma once

// One GPU as the server owns it: its properties, a pool of streams (each with the scratch its
// kernels need), the staging pool, per-request partial slots, the copy threads and the completion
// thread. Everything is allocated at start; the request path allocates no device or pinned
// memory. Chunks are copied into pinned memory on the device's copy threads, so gRPC's threads
// only hand them over.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/statusor.h"
#include "common/thread_pool.h"
#include "kernels/reduce.h"
#include "runtime/backend.h"
#include "runtime/cuda/completion_thread.h"
#include "runtime/cuda/cuda_resources.h"
#include "runtime/device_options.h"
#include "runtime/session/partial_slot.h"
#include "runtime/session/piece_slot.h"
#include "runtime/session/session_device.h"
#include "runtime/slot_pool.h"

namespace gpureduce::runtime {

// A pinned host buffer (`host`, owned by `pinned`), the device buffer it is copied to, and the
// events that time the copy and the kernel. The staging pool's slots are the server's bound on
// staging memory, and its FIFO wait is the GPU's admission.
struct StagingSlot final : PieceSlot {
  PinnedBuffer<float> pinned;
  const float* mapped = nullptr;  // the GPU's address of `host`
  DeviceBuffer<float> device;
  CudaEvent started;         // before the host-to-device copy
  CudaEvent copied;          // after it, before the kernel
  CudaEvent reduced;         // after the kernel
  bool copy_queued = false;  // the piece it carries now has its host-to-device time timed
};

class Device final : public SessionDevice {
 public:
  // A stream and the scratch that only work on this stream uses. Several requests share a
  // lane: each enqueues a piece's copy, kernels and events under `mu`, so no other request's
  // kernels land between a reduction and the fold that reads its result from the scratch.
  struct Lane {
    std::mutex mu;
    CudaStream stream;
    DeviceBuffer<std::byte> scratch;
    kernels::ScratchLayout scratch_layout;  // the kernels' arrays in `scratch`
    // Copies from shared memory's pinned pages go here, so that one piece's copy overlaps the
    // kernel of the piece before on `stream` (which waits for each copy's event).
    CudaStream copies;
  };

  static absl::StatusOr<std::unique_ptr<Device>> Open(int index, const DeviceOptions& options);
  ~Device();  // waits for the device's work before its resources go

  const DeviceDescription& description() const { return description_; }
  const kernels::GpuTraits& traits() const { return traits_; }
  int index() const override { return description_.index; }

  // Makes this the calling thread's current device (any thread may serve any device).
  absl::Status Activate() const override;

  // The staging pool's state and the device's memory (see Backend::Usage).
  DeviceUsage Usage() const;

  // Round robin over the high-priority lanes, or for a ladder kernel over the low-priority ones.
  Lane& NextLane(kernels::KernelId kernel);
  // RESOURCE_EXHAUSTED when `options.sessions` requests already hold one.
  absl::StatusOr<PartialSlot*> AcquirePartial();
  void ReleasePartial(PartialSlot* slot) override { partials_->Release(slot); }

  // What the requests on this device will move (their size when known, else one staging buffer),
  // for the backend's choice of device: each request adds its bytes once and removes them once.
  void AddLoad(uint64_t bytes) override {
    requests_.fetch_add(1, std::memory_order_relaxed);
    outstanding_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  }
  void RemoveLoad(uint64_t bytes) override {
    requests_.fetch_sub(1, std::memory_order_relaxed);
    outstanding_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
  }
  uint64_t outstanding_bytes() const { return outstanding_bytes_.load(std::memory_order_relaxed); }

  // Its slots are StagingSlots.
  SlotPool<PieceSlot>& staging() override { return *staging_; }
  size_t staging_slot_floats() const override { return staging_slot_floats_; }
  CompletionThread& completions() override { return *completions_; }
  void SubmitCopy(absl::AnyInvocable<void() &&> copy) override {
    copiers_->Submit(std::move(copy));
  }
  uint32_t lanes() const { return static_cast<uint32_t>(lanes_.size()); }

  // Records a failed CUDA call; a sticky error marks the device lost and tells `on_lost`.
  void ReportError(cudaError_t error);
  // The same for a status from CUDA_RETURN_IF_ERROR; other statuses are ignored.
  void ReportError(const absl::Status& status) override;
  void ReportStreamError(GpuStatus error) override { ReportError(static_cast<cudaError_t>(error)); }
  bool lost() const { return lost_.load(std::memory_order_acquire); }
  void set_on_lost(std::function<void()> on_lost) { on_lost_ = std::move(on_lost); }

 private:
  Device() = default;
  absl::Status Init(int index, const DeviceOptions& options);
  absl::Status InitLanes(uint32_t streams, uint32_t ladder_streams, size_t slot_floats);
  absl::Status InitStaging(uint32_t slots, size_t slot_floats);
  absl::Status InitPartials(uint32_t sessions);

  DeviceDescription description_;
  kernels::GpuTraits traits_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::vector<std::unique_ptr<Lane>> ladder_lanes_;
  std::atomic<uint32_t> next_lane_{0};
  std::atomic<uint32_t> next_ladder_lane_{0};
  size_t staging_slot_floats_ = 0;
  std::unique_ptr<SlotPool<PieceSlot>> staging_;
  PinnedBuffer<RunningResult> host_partials_;
  std::unique_ptr<SlotPool<PartialSlot>> partials_;
  std::atomic<bool> lost_{false};
  std::atomic<uint32_t> requests_{0};
  std::atomic<uint64_t> outstanding_bytes_{0};
  std::function<void()> on_lost_;
  // Declared last, destroyed first: no callback may outlive the state it touches. A copy may
  // queue a completion, so the copiers go before the completion thread.
  std::unique_ptr<CompletionThread> completions_;
  std::unique_ptr<ThreadPool> copiers_;
};

}  // namespace gpureduce::runtime
