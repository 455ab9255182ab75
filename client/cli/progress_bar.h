#pragma once

// A one-line transfer progress bar on stderr, drawn only when stderr is a terminal and the
// transfer has lasted long enough to be worth watching.

#include <chrono>
#include <cstdint>

namespace gpureduce::cli {

class ProgressBar {
 public:
  // `total_bytes` 0: unknown (shows bytes and rate without a bar).
  explicit ProgressBar(uint64_t total_bytes);
  ~ProgressBar() { Finish(); }

  void Update(uint64_t bytes_done);
  // Erases the line, so the result prints on a clean terminal.
  void Finish();

 private:
  using Clock = std::chrono::steady_clock;
  const uint64_t total_bytes_;
  const bool enabled_;
  const Clock::time_point start_;
  Clock::time_point last_draw_;
  bool drawn_ = false;
};

}  // namespace gpureduce::cli
