#include "runtime/cuda/completion_thread.h"

#include <algorithm>
#include <utility>

namespace gpureduce::runtime {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

CompletionThread::CompletionThread(int device) : device_(device), thread_([this] { Loop(); }) {}

CompletionThread::~CompletionThread() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
  for (cudaEvent_t event : free_events_) cudaEventDestroy(event);
}

void CompletionThread::Post(absl::AnyInvocable<void() &&> callback) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    posted_.push_back(std::move(callback));
  }
  cv_.notify_one();
}

void CompletionThread::RunAfter(cudaStream_t stream, StreamDone callback) {
  cudaEvent_t event = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_events_.empty()) {
      event = free_events_.back();
      free_events_.pop_back();
    }
  }
  cudaError_t error = cudaSuccess;
  if (event == nullptr) error = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
  if (error == cudaSuccess) error = cudaEventRecord(event, stream);
  if (error != cudaSuccess && event != nullptr) {
    cudaEventDestroy(event);
    event = nullptr;
  }
  // A callback whose event could not be recorded still waits for its stream's earlier
  // callbacks: they may free what it touches, or it what they do.
  Queue(Pending{stream, event, std::move(callback), error});
}

void CompletionThread::RunAfterEvent(cudaStream_t stream, cudaEvent_t event, StreamDone callback) {
  Queue(Pending{stream, event, std::move(callback), cudaSuccess, /*owned=*/false});
}

void CompletionThread::Queue(Pending pending) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.push_back(std::move(pending));
  }
  cv_.notify_one();
}

void CompletionThread::Loop() {
  (void)cudaSetDevice(device_);  // queries run in the device's context
  Clock::time_point last_progress = Clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    if (posted_.empty() && pending_.empty()) {
      if (stopping_) return;
      cv_.wait(lock, [this] { return stopping_ || !posted_.empty() || !pending_.empty(); });
      last_progress = Clock::now();
      continue;
    }
    std::deque<absl::AnyInvocable<void()&&>> posted = std::move(posted_);
    posted_.clear();
    std::deque<Pending> pending = std::move(pending_);
    pending_.clear();
    lock.unlock();

    for (auto& callback : posted) std::move(callback)();
    std::deque<Pending> waiting;
    std::vector<cudaEvent_t> done;
    std::vector<cudaStream_t> blocked;  // streams with an earlier callback still waiting
    for (Pending& item : pending) {
      const bool behind = std::find(blocked.begin(), blocked.end(), item.stream) != blocked.end();
      const cudaError_t status = behind                  ? cudaErrorNotReady
                                 : item.event == nullptr ? item.error
                                                         : cudaEventQuery(item.event);
      if (status == cudaErrorNotReady) {
        if (!behind) blocked.push_back(item.stream);
        waiting.push_back(std::move(item));
        continue;
      }
      if (item.event != nullptr && item.owned) done.push_back(item.event);
      std::move(item.callback)(status);
    }
    const bool progress = !posted.empty() || !done.empty();

    lock.lock();
    free_events_.insert(free_events_.end(), done.begin(), done.end());
    // Those still waiting were queued before anything queued meanwhile.
    pending_.insert(pending_.begin(), std::make_move_iterator(waiting.begin()),
                    std::make_move_iterator(waiting.end()));
    const Clock::time_point now = Clock::now();
    if (progress) {
      last_progress = now;
    } else if (posted_.empty() && !pending_.empty()) {
      if (now - last_progress < kSpin) {
        lock.unlock();
        std::this_thread::yield();
        lock.lock();
      } else {
        cv_.wait_for(lock, std::chrono::microseconds(20));
      }
    }
  }
}

}  // namespace gpureduce::runtime
