#pragma once

// The fixed set of staging slots of one device: a pinned host buffer, the device buffer it is
// copied to, and the events that time the copy and the kernel. The pool's total is the
// server's bound on staging memory. A request that finds no free slot waits in FIFO order
// (this is the GPU's admission) until a slot frees or its call is cancelled.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "server/cuda/cuda_resources.h"

namespace gpureduce::server {

struct StagingSlot {
  PinnedMemory host;
  DeviceMemory device;
  CudaEvent started;  // before the host-to-device copy
  CudaEvent copied;   // after it, before the kernel
  CudaEvent reduced;  // after the kernel
  float* host_floats() const { return static_cast<float*>(host.get()); }
  const float* device_floats() const { return static_cast<const float*>(device.get()); }
};

class StagingPool {
 public:
  // Called with a slot, or with CANCELLED when the waiter was cancelled first.
  using SlotReady = absl::AnyInvocable<void(absl::StatusOr<StagingSlot*>) &&>;

  static absl::StatusOr<std::unique_ptr<StagingPool>> Create(size_t slots, size_t slot_bytes);

  // Hands `ready` a free slot now (on this thread), or later on the thread that releases one.
  // `waiter` identifies the request for Cancel.
  void Acquire(uint64_t waiter, SlotReady ready);
  // Gives the slot to the oldest waiter (running its callback on this thread), else frees it.
  void Release(StagingSlot* slot);
  // A waiting Acquire of `waiter` gets CANCELLED (on this thread); no effect otherwise.
  void Cancel(uint64_t waiter);

  size_t slot_bytes() const { return slot_bytes_; }

 private:
  struct Waiter {
    uint64_t id;
    SlotReady ready;
  };

  explicit StagingPool(size_t slot_bytes) : slot_bytes_(slot_bytes) {}

  const size_t slot_bytes_;
  std::vector<std::unique_ptr<StagingSlot>> slots_;
  std::mutex mu_;
  std::vector<StagingSlot*> free_;
  std::deque<Waiter> waiters_;
};

}  // namespace gpureduce::server
