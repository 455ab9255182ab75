#pragma once

// A fixed set of worker threads running submitted tasks in FIFO order.

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/any_invocable.h"

namespace gpureduce {

class ThreadPool {
 public:
  // `threads` 0 means one per hardware thread.
  explicit ThreadPool(size_t threads);
  ~ThreadPool();  // runs what is queued, then joins

  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Submit(absl::AnyInvocable<void() &&> task);
  size_t size() const { return workers_.size(); }
  // Tasks submitted and not yet taken by a worker (a snapshot): a hint that the workers are busy
  // (it also counts, for a moment, a task whose idle worker has not woken yet).
  size_t backlog() const { return backlog_.load(std::memory_order_relaxed); }

 private:
  void WorkerLoop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<absl::AnyInvocable<void() &&>> tasks_;
  bool stopping_ = false;
  std::atomic<size_t> backlog_{0};
  std::vector<std::thread> workers_;
};

}  // namespace gpureduce
