#pragma once

// What a session needs of its device: the staging slots, the copy threads and the completions it
// shares with the device's other requests, and the device's load and error accounting. Device
// (runtime/cuda/device.h) is the real one; tests fake it on the CPU.

#include <cstddef>
#include <cstdint>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "runtime/session/completion_queue.h"
#include "runtime/session/partial_slot.h"
#include "runtime/session/piece_slot.h"
#include "runtime/slot_pool.h"

namespace gpureduce::runtime {

class SessionDevice {
 public:
  virtual ~SessionDevice() = default;

  virtual int index() const = 0;
  // Makes this the calling thread's current device (any thread may serve any device).
  virtual absl::Status Activate() const = 0;

  virtual SlotPool<PieceSlot>& staging() = 0;
  virtual size_t staging_slot_floats() const = 0;
  // Runs `copy` on one of the device's copy threads.
  virtual void SubmitCopy(absl::AnyInvocable<void() &&> copy) = 0;
  virtual CompletionQueue& completions() = 0;

  // A request's share of the device's load, added once and removed once.
  virtual void AddLoad(uint64_t bytes) = 0;
  virtual void RemoveLoad(uint64_t bytes) = 0;
  virtual void ReleasePartial(PartialSlot* slot) = 0;

  // Records a failed GPU call (a status from CUDA_RETURN_IF_ERROR; other statuses are ignored).
  virtual void ReportError(const absl::Status& status) = 0;
  // Records the error that stopped a stream.
  virtual void ReportStreamError(GpuStatus error) = 0;
};

}  // namespace gpureduce::runtime
