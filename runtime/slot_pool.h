#pragma once

// A fixed set of slots that requests share, such as a GPU's pinned staging buffers. A request
// takes a free slot or waits, in FIFO order, until one is released or its wait is cancelled.
// The pool's size is the bound on what it hands out, so it is also an admission: requests beyond
// it wait (Acquire) or are refused (TryAcquire). Generic over the slot, so its logic is tested
// without a GPU.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace gpureduce::runtime {

template <typename SlotT>
class SlotPool {
 public:
  // Called with a slot, or with CANCELLED when the waiter was cancelled first.
  using SlotReady = absl::AnyInvocable<void(absl::StatusOr<SlotT*>) &&>;

  // `what` names a slot in the CANCELLED message ("a GPU staging buffer").
  SlotPool(std::vector<std::unique_ptr<SlotT>> slots, std::string what)
      : slots_(std::move(slots)), what_(std::move(what)) {
    for (const auto& slot : slots_) free_.push_back(slot.get());
  }
  SlotPool(const SlotPool&) = delete;
  SlotPool& operator=(const SlotPool&) = delete;

  // Hands `ready` a free slot now (on this thread), or later on the thread that releases one.
  // `waiter` identifies the request for Cancel.
  void Acquire(uint64_t waiter, SlotReady ready) {
    SlotT* slot = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (free_.empty()) {
        waiters_.push_back(Waiter{waiter, std::move(ready)});
        ++waits_;
        return;
      }
      slot = free_.back();
      free_.pop_back();
    }
    std::move(ready)(slot);
  }

  // A free slot, or nullptr when every slot is taken (a request waiting in Acquire does not
  // get one any sooner for it).
  SlotT* TryAcquire() {
    std::lock_guard<std::mutex> lock(mu_);
    if (free_.empty()) return nullptr;
    SlotT* slot = free_.back();
    free_.pop_back();
    return slot;
  }

  // Gives the slot to the oldest waiter (running its callback on this thread), else frees it.
  void Release(SlotT* slot) {
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

  // A waiting Acquire of `waiter` gets CANCELLED (on this thread); no effect otherwise.
  void Cancel(uint64_t waiter) {
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
      std::move(cancelled)(absl::CancelledError(absl::StrCat(
          "the call was cancelled (or its deadline passed) while waiting for ", what_)));
    }
  }

  size_t size() const { return slots_.size(); }
  size_t free_slots() const {
    std::lock_guard<std::mutex> lock(mu_);
    return free_.size();
  }
  size_t waiting() const {
    std::lock_guard<std::mutex> lock(mu_);
    return waiters_.size();
  }
  // Acquires that had to wait, since the pool was made.
  uint64_t waits() const {
    std::lock_guard<std::mutex> lock(mu_);
    return waits_;
  }

 private:
  struct Waiter {
    uint64_t id;
    SlotReady ready;
  };

  const std::vector<std::unique_ptr<SlotT>> slots_;
  const std::string what_;
  mutable std::mutex mu_;
  std::vector<SlotT*> free_;
  std::deque<Waiter> waiters_;
  uint64_t waits_ = 0;
};

}  // namespace gpureduce::runtime
