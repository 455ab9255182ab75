#include "server/cuda/staging_pool.h"

#include <utility>

#include "common/status_macros.h"

namespace gpureduce::server {

absl::StatusOr<std::unique_ptr<StagingPool>> StagingPool::Create(size_t slots,
                                                                 size_t slot_bytes) {
  std::unique_ptr<StagingPool> pool(new StagingPool(slot_bytes));
  for (size_t i = 0; i < slots; ++i) {
    auto slot = std::make_unique<StagingSlot>();
    ASSIGN_OR_RETURN(slot->host, AllocatePinned(slot_bytes));
    ASSIGN_OR_RETURN(slot->device, AllocateDevice(slot_bytes));
    ASSIGN_OR_RETURN(slot->started, CreateTimingEvent());
    ASSIGN_OR_RETURN(slot->copied, CreateTimingEvent());
    ASSIGN_OR_RETURN(slot->reduced, CreateTimingEvent());
    pool->free_.push_back(slot.get());
    pool->slots_.push_back(std::move(slot));
  }
  return pool;
}

void StagingPool::Acquire(uint64_t waiter, SlotReady ready) {
  StagingSlot* slot = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (free_.empty()) {
      waiters_.push_back(Waiter{waiter, std::move(ready)});
      return;
    }
    slot = free_.back();
    free_.pop_back();
  }
  std::move(ready)(slot);
}

void StagingPool::Release(StagingSlot* slot) {
  SlotReady next;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (waiters_.empty()) {
      free_.push_back(slot);
      return;
    }
    next = std::move(waiters_.front().ready);
    waiters_.pop_front();
  }
  std::move(next)(slot);
}

void StagingPool::Cancel(uint64_t waiter) {
  SlotReady cancelled;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = waiters_.begin(); it != waiters_.end(); ++it) {
      if (it->id == waiter) {
        cancelled = std::move(it->ready);
        waiters_.erase(it);
        break;
      }
    }
  }
  if (cancelled) {
    std::move(cancelled)(absl::CancelledError(
        "the call was cancelled (or its deadline passed) while waiting for a GPU staging buffer"));
  }
}

}  // namespace gpureduce::server
