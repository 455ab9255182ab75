#pragma once

// The client's own answer to a reduction (float64 within a chunk, long double across chunks),
// accumulated as the input streams past: `gpureduce reduce --verify` shows a user that the
// server's result is right without a second tool, and gpureduce-load checks every answer with
// it. Written without the server's code, so a bug they shared could not hide.

#include <cstdint>

#include "absl/types/span.h"
#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::client {

class RunningReference {
 public:
  explicit RunningReference(v1::Op op) : op_(op) {}

  void Add(absl::Span<const float> chunk);

  double value() const;
  int64_t index() const { return index_; }
  // What an error is judged against: sum(|x|) for sums and means, |value| otherwise.
  double scale() const;

 private:
  v1::Op op_;
  uint64_t count_ = 0;
  long double sum_ = 0;      // SUM, MEAN: sum of x; SUM_SQUARES: sum of x^2
  long double abs_sum_ = 0;  // sum of |x| (or x^2)
  long double product_ = 1;
  float extreme_ = 0;  // MIN, MAX, ARGMIN, ARGMAX
  int64_t index_ = -1;
  bool saw_nan_ = false;
};

}  // namespace gpureduce::client
