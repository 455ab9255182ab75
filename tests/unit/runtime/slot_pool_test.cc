// SlotPool with plain slots: what the GPU's staging pool and partial slots do, without a GPU.

#include "runtime/slot_pool.h"

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpureduce::runtime {
namespace {

using ::testing::HasSubstr;

struct Slot {
  int id = 0;
  std::atomic<int> users{0};  // how many holders at once: must never exceed 1
};

std::unique_ptr<SlotPool<Slot>> MakePool(int slots) {
  std::vector<std::unique_ptr<Slot>> owned;
  for (int i = 0; i < slots; ++i) {
    owned.push_back(std::make_unique<Slot>());
    owned.back()->id = i;
  }
  return std::make_unique<SlotPool<Slot>>(std::move(owned), "a test slot");
}

// Records what a waiter was handed.
struct Handed {
  bool called = false;
  absl::StatusOr<Slot*> slot = absl::UnknownError("not called");
  SlotPool<Slot>::SlotReady Callback() {
    return [this](absl::StatusOr<Slot*> got) {
      called = true;
      slot = std::move(got);
    };
  }
};

TEST(SlotPoolTest, FreeSlotsAreHandedOverAtOnce) {
  auto pool = MakePool(2);
  Handed a, b;
  pool->Acquire(1, a.Callback());
  pool->Acquire(2, b.Callback());
  ASSERT_TRUE(a.called && b.called);
  ASSERT_TRUE(a.slot.ok() && b.slot.ok());
  EXPECT_NE(*a.slot, *b.slot);
  EXPECT_EQ(pool->free_slots(), 0u);
  EXPECT_EQ(pool->size(), 2u);
  EXPECT_EQ(pool->waits(), 0u) << "nobody waited";
}

TEST(SlotPoolTest, WaitersAreServedInArrivalOrderByReleases) {
  auto pool = MakePool(1);
  Handed holder, first, second;
  pool->Acquire(1, holder.Callback());
  pool->Acquire(2, first.Callback());
  pool->Acquire(3, second.Callback());
  EXPECT_FALSE(first.called);
  EXPECT_EQ(pool->waiting(), 2u);
  pool->Release(*holder.slot);
  ASSERT_TRUE(first.called);
  EXPECT_FALSE(second.called);
  EXPECT_EQ(*first.slot, *holder.slot) << "the released slot goes to the oldest waiter";
  pool->Release(*first.slot);
  ASSERT_TRUE(second.called);
  pool->Release(*second.slot);
  EXPECT_EQ(pool->free_slots(), 1u);
  EXPECT_EQ(pool->waiting(), 0u);
  EXPECT_EQ(pool->waits(), 2u) << "two acquires had to wait";
}

TEST(SlotPoolTest, ACancelledWaiterGetsCancelledAndLeavesTheQueue) {
  auto pool = MakePool(1);
  Handed holder, cancelled, next;
  pool->Acquire(1, holder.Callback());
  pool->Acquire(2, cancelled.Callback());
  pool->Acquire(3, next.Callback());
  pool->Cancel(2);
  ASSERT_TRUE(cancelled.called);
  EXPECT_EQ(cancelled.slot.status().code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(cancelled.slot.status().message(), HasSubstr("waiting for a test slot"));
  pool->Cancel(2);  // a second cancel, and one for a holder, change nothing
  pool->Cancel(1);
  pool->Release(*holder.slot);
  ASSERT_TRUE(next.called);
  EXPECT_TRUE(next.slot.ok());
}

TEST(SlotPoolTest, TryAcquireNeverWaits) {
  auto pool = MakePool(2);
  Slot* a = pool->TryAcquire();
  Slot* b = pool->TryAcquire();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(pool->TryAcquire(), nullptr);
  pool->Release(a);
  EXPECT_EQ(pool->TryAcquire(), a);
}

TEST(SlotPoolTest, ManyThreadsNeverShareASlotAndEveryWaiterIsServed) {
  constexpr int kSlots = 3, kThreads = 8, kRounds = 2000;
  auto pool = MakePool(kSlots);
  std::atomic<int> served{0}, shared{0}, lost{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        std::promise<Slot*> got;
        pool->Acquire(uint64_t(t) * kRounds + round,
                      [&got](absl::StatusOr<Slot*> slot) { got.set_value(*slot); });
        std::future<Slot*> future = got.get_future();
        if (future.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
          ++lost;  // a waiter nobody served: fail rather than hang
          return;
        }
        Slot* slot = future.get();
        if (slot->users.fetch_add(1) != 0) ++shared;
        std::this_thread::yield();  // hold it a moment, so a second holder would overlap
        slot->users.fetch_sub(1);
        ++served;
        pool->Release(slot);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(lost.load(), 0);
  EXPECT_EQ(served.load(), kThreads * kRounds);
  EXPECT_EQ(shared.load(), 0);
  EXPECT_EQ(pool->free_slots(), size_t{kSlots});
}

}  // namespace
}  // namespace gpureduce::runtime
