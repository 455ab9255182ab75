#pragma once

// `gpureduce reduce --verify`: the client's own answer (float64 within a chunk, long double
// across chunks), accumulated as the input streams past, so a user can see the server's result
// is right without a second tool.

#include <cstdint>

#include "absl/types/span.h"
#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::cli {

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

}  // namespace gpureduce::cli
