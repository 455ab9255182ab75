#pragma once

// Stats bound for a RowSink, gathered while their rows follow one another and handed over a run
// at a time: the sink finalizes a run's answers in one loop per op (EncodeAnswers), and a
// std::function call per row of 16 elements cost as much as reducing it.

#include <cstddef>
#include <cstdint>
#include <span>

#include "common/reduction/stats.h"
#include "kernels/reduce.h"

namespace gpureduce::kernels::cpu {

class SinkRun {
 public:
  explicit SinkRun(const RowSink& sink) : sink_(sink) {}
  SinkRun(const SinkRun&) = delete;
  SinkRun& operator=(const SinkRun&) = delete;
  ~SinkRun() { Flush(); }

  void Add(uint64_t row, const Stats& stats) {
    if (size_ > 0 && (row != first_ + size_ || size_ == kLongest)) Flush();
    if (size_ == 0) first_ = row;
    stats_[size_++] = stats;
  }

  void Flush() {
    if (size_ > 0) sink_(first_, std::span<const Stats>(stats_, size_));
    size_ = 0;
  }

 private:
  static constexpr size_t kLongest = 64;  // 10.5 KiB of Stats

  const RowSink& sink_;
  uint64_t first_ = 0;
  size_t size_ = 0;
  Stats stats_[kLongest];
};

}  // namespace gpureduce::kernels::cpu
