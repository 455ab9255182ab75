#pragma once

// A reduction in progress: what one block, chunk or request has seen so far. Partials of
// consecutive pieces combine left to right, which keeps ARGMIN/ARGMAX's first occurrence.

#include <cstdint>

#include "absl/status/statusor.h"
#include "kernels/op.h"

namespace gpureduce::kernels {

struct Partial {
  // SUM, MEAN, SUM_SQUARES: the float64 sum; PROD: the float64 product; MIN, MAX, ARGMIN,
  // ARGMAX: the extreme element (NaN once any element was NaN). Meaningless while count is 0.
  double value = 0.0;
  int64_t index = -1;  // ARGMIN/ARGMAX: position of `value` in the whole array
  uint64_t count = 0;  // elements seen
};

// `left` covers the elements before `right`; ties and NaNs resolve to the earlier element.
Partial Combine(Op op, const Partial& left, const Partial& right);

// The finished answer of a request.
struct ReduceResult {
  double value = 0.0;
  int64_t index = -1;
  uint64_t count = 0;
};

// Applies the op's last step (MEAN divides) and the empty-input rule: SUM is 0, PROD is 1,
// everything else is INVALID_ARGUMENT.
absl::StatusOr<ReduceResult> Finalize(Op op, const Partial& partial);

}  // namespace gpureduce::kernels
