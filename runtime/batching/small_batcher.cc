#include "runtime/batching/small_batcher.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace gpureduce::runtime {

struct SmallBatcher::Batch {
  gpureduce::DType dtype;
  gpureduce::StatsNeeds needs;
  std::vector<uint64_t> words;  // the payloads one after another (words: aligned for any dtype)
  uint64_t bytes = 0;
  std::vector<uint64_t> bounds = {0};  // in elements
  std::vector<ItemDone> done;
  std::vector<Clock::time_point> added;
  Clock::time_point opened;
};

namespace {

void Unite(gpureduce::StatsNeeds& into, const gpureduce::StatsNeeds& more) {
  into.sum |= more.sum;
  into.sum_squares |= more.sum_squares;
  into.prod |= more.prod;
  into.min |= more.min;
  into.max |= more.max;
  into.moments |= more.moments;
}

}  // namespace

SmallBatcher::SmallBatcher(BlockKernels& kernels, BatchOptions options)
    : kernels_(kernels),
      options_(options),
      capacity_bytes_(kernels.max_piece_bytes() == 0
                          ? uint64_t{4} << 20
                          : kernels.max_piece_bytes() / sizeof(uint64_t) * sizeof(uint64_t)),
      capacity_items_(kernels.max_segments()),
      timer_([this] { TimerLoop(); }) {}

SmallBatcher::~SmallBatcher() {
  std::vector<std::unique_ptr<Batch>> rest;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    rest = TakeReady(Clock::now(), true);
  }
  cv_.notify_all();
  timer_.join();
  for (auto& batch : rest) Launch(std::move(batch));
  std::unique_lock<std::mutex> lock(mu_);
  landed_cv_.wait(lock, [this] { return in_flight_ == 0; });
}

bool SmallBatcher::Takes(uint64_t bytes) const {
  return bytes <= options_.max_request_bytes && bytes <= capacity_bytes_;
}

void SmallBatcher::Add(gpureduce::DType dtype, const gpureduce::StatsNeeds& needs,
                       std::span<const std::byte> data, ItemDone done) {
  const size_t element = gpureduce::DTypeSize(dtype);
  std::vector<std::unique_ptr<Batch>> ready;
  bool opened = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::unique_ptr<Batch>& open = open_[static_cast<int>(dtype) - 1];
    if (open != nullptr &&
        (open->bytes + data.size() > capacity_bytes_ || open->done.size() + 1 > capacity_items_)) {
      ready.push_back(std::move(open));  // full: it goes, this request opens the next
    }
    if (open == nullptr) {
      open = std::make_unique<Batch>();
      open->dtype = dtype;
      open->opened = Clock::now();
      opened = true;
    }
    open->words.resize((open->bytes + data.size() + sizeof(uint64_t) - 1) / sizeof(uint64_t));
    std::memcpy(reinterpret_cast<std::byte*>(open->words.data()) + open->bytes, data.data(),
                data.size());
    open->bytes += data.size();
    open->bounds.push_back(open->bounds.back() + data.size() / element);
    Unite(open->needs, needs);
    open->done.push_back(std::move(done));
    open->added.push_back(Clock::now());
    for (auto& batch : TakeReady(Clock::now(), false)) ready.push_back(std::move(batch));
  }
  if (opened) cv_.notify_all();
  for (auto& batch : ready) Launch(std::move(batch));
}

std::vector<std::unique_ptr<SmallBatcher::Batch>> SmallBatcher::TakeReady(Clock::time_point now,
                                                                          bool all) {
  std::vector<std::unique_ptr<Batch>> ready;
  for (std::unique_ptr<Batch>& open : open_) {
    if (open == nullptr) continue;
    const bool full = open->bytes >= capacity_bytes_ || open->done.size() >= capacity_items_;
    const bool idle = in_flight_ + ready.size() < options_.in_flight;
    const bool waited = now - open->opened >= options_.window;
    if (all || full || idle || waited) ready.push_back(std::move(open));
  }
  // Counted as running from here, so that no other thread launches past in_flight meanwhile.
  in_flight_ += static_cast<uint32_t>(ready.size());
  for (const auto& batch : ready) {
    ++counts_.batches;
    counts_.requests += batch->done.size();
  }
  return ready;
}

void SmallBatcher::Launch(std::unique_ptr<Batch> batch) {
  const Clock::time_point launched = Clock::now();
  std::shared_ptr<Batch> shared = std::move(batch);
  const std::span<const std::byte> data(reinterpret_cast<const std::byte*>(shared->words.data()),
                                        shared->bytes);
  kernels_.Segments({shared->dtype, shared->needs}, data, shared->bounds,
                    [this, shared, launched](absl::StatusOr<std::vector<gpureduce::Stats>> stats,
                                             BlockKernels::Timing timing) mutable {
                      const auto size = static_cast<uint32_t>(shared->done.size());
                      for (uint32_t i = 0; i < size; ++i) {
                        BatchTiming own;
                        own.waited = (launched - shared->added[i]) + timing.queue;
                        own.kernel = timing.compute / size;
                        own.batch_size = size;
                        absl::StatusOr<gpureduce::Stats> answer =
                            stats.ok() ? absl::StatusOr<gpureduce::Stats>((*stats)[i])
                                       : absl::StatusOr<gpureduce::Stats>(stats.status());
                        std::move(shared->done[i])(std::move(answer), own);
                      }
                      Landed();
                    });
}

void SmallBatcher::Landed() {
  std::vector<std::unique_ptr<Batch>> ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    --in_flight_;
    if (!stopping_) ready = TakeReady(Clock::now(), false);
  }
  landed_cv_.notify_all();
  for (auto& batch : ready) Launch(std::move(batch));
}

void SmallBatcher::TimerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    Clock::time_point deadline = Clock::time_point::max();
    for (const auto& open : open_) {
      if (open != nullptr) deadline = std::min(deadline, open->opened + options_.window);
    }
    if (deadline == Clock::time_point::max()) {
      cv_.wait(lock);
    } else {
      cv_.wait_until(lock, deadline);
    }
    if (stopping_) break;
    std::vector<std::unique_ptr<Batch>> ready = TakeReady(Clock::now(), false);
    if (ready.empty()) continue;
    lock.unlock();
    for (auto& batch : ready) Launch(std::move(batch));
    lock.lock();
  }
}

BatchCounts SmallBatcher::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

}  // namespace gpureduce::runtime
