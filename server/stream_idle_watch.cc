#include "server/stream_idle_watch.h"

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

namespace gpureduce::server {
namespace {

int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void StreamIdleWatch::Stream::WaitingForMessage() {
  // 0 means "not waiting", so a clock that reads 0 is nudged by a nanosecond.
  const int64_t now = NowNanos();
  waiting_since_ns_.store(now == 0 ? 1 : now, std::memory_order_relaxed);
}

namespace {

// A bound that is on: positive and finite; else ZeroDuration().
absl::Duration Bound(absl::Duration limit) {
  return limit > absl::ZeroDuration() && limit != absl::InfiniteDuration() ? limit
                                                                           : absl::ZeroDuration();
}

}  // namespace

StreamIdleWatch::StreamIdleWatch(absl::Duration limit, absl::Duration full_limit)
    : limit_(Bound(limit)), full_limit_(Bound(full_limit)) {
  if (limit_ > absl::ZeroDuration() || full_limit_ > absl::ZeroDuration()) {
    thread_ = std::thread([this] { Run(); });
  }
}

void StreamIdleWatch::ServerFull() {
  if (full_limit_ > absl::ZeroDuration()) {
    full_since_ns_.store(NowNanos(), std::memory_order_relaxed);
  }
}

StreamIdleWatch::~StreamIdleWatch() {
  stopping_.Notify();
  if (thread_.joinable()) thread_.join();
}

void StreamIdleWatch::Add(Stream* stream) {
  if (!thread_.joinable()) return;
  absl::MutexLock lock(&mu_);
  streams_.insert(stream);
}

void StreamIdleWatch::Remove(Stream* stream) {
  if (!thread_.joinable()) return;
  absl::MutexLock lock(&mu_);
  streams_.erase(stream);
}

void StreamIdleWatch::Run() {
  // Four looks per limit: a stream is told between 1 and 1.25 limits after its last message.
  const absl::Duration shortest =
      limit_ == absl::ZeroDuration()
          ? full_limit_
          : (full_limit_ == absl::ZeroDuration() ? limit_ : std::min(limit_, full_limit_));
  const absl::Duration tick = std::max(shortest / 4, absl::Milliseconds(10));
  const absl::Duration full_hold = 2 * full_limit_;  // saturates, where int64 would overflow
  std::vector<std::pair<Stream*, int64_t>> idle;     // and the wait each is told about
  while (!stopping_.WaitForNotificationWithTimeout(tick)) {
    absl::Duration limit = limit_;
    bool full = false;
    {
      absl::MutexLock lock(&mu_);
      const int64_t now = NowNanos();
      const int64_t full_since = full_since_ns_.load(std::memory_order_relaxed);
      if (full_since != 0 && absl::Nanoseconds(now - full_since) <= full_hold &&
          (limit == absl::ZeroDuration() || full_limit_ < limit)) {
        limit = full_limit_;
        full = true;
      }
      if (limit == absl::ZeroDuration()) continue;
      const int64_t limit_ns = absl::ToInt64Nanoseconds(limit);
      for (Stream* stream : streams_) {
        const int64_t since = stream->waiting_since_ns_.load(std::memory_order_relaxed);
        if (since != 0 && since != stream->told_since_ && now - since > limit_ns) {
          stream->told_since_ = since;
          stream->Ref();  // under mu_: Remove cannot have returned yet
          idle.emplace_back(stream, since);
        }
      }
    }
    // Outside the lock: OnIdle may finish the call, and its end calls Remove.
    for (auto [stream, since] : idle) {
      stream->OnIdle(limit, since, full);
      stream->Unref();
    }
    idle.clear();
  }
}

}  // namespace gpureduce::server
