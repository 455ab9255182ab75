#pragma once

// A reduction in progress: what one block, chunk or request has seen so far. Partials of
// consecutive pieces combine left to right, which keeps ARGMIN/ARGMAX's first occurrence.
// Plain C++ usable from CUDA kernels, so every backend combines the same way.

#include <cstdint>

#include "kernels/host_device.h"
#include "kernels/op.h"

namespace gpureduce::kernels {

struct Partial {
  // SUM, MEAN, SUM_SQUARES: the float64 sum; PROD: the float64 product; MIN, MAX, ARGMIN,
  // ARGMAX: the extreme element (NaN once any element was NaN). Meaningless while count is 0.
  double value = 0.0;
  int64_t index = -1;  // ARGMIN/ARGMAX: position of `value` in the whole array
  uint64_t count = 0;  // elements seen
};

// True when `candidate` (a later element) replaces `best` for MIN/ARGMIN (`less`) or
// MAX/ARGMAX. The first NaN wins and stays; among numbers only a strict improvement replaces.
GPUREDUCE_HOST_DEVICE inline bool ReplacesExtreme(double best, double candidate, bool less) {
  if (best != best) return false;
  if (candidate != candidate) return true;
  return less ? candidate < best : candidate > best;
}

// `left` covers the elements before `right`; ties and NaNs resolve to the earlier element.
GPUREDUCE_HOST_DEVICE inline Partial Combine(Op op, const Partial& left, const Partial& right) {
  if (left.count == 0) return right;
  if (right.count == 0) return left;
  Partial out = left;
  out.count = left.count + right.count;
  switch (op) {
    case Op::kSum:
    case Op::kMean:
    case Op::kSumSquares:
      out.value = left.value + right.value;
      break;
    case Op::kProd:
      out.value = left.value * right.value;
      break;
    case Op::kMin:
    case Op::kArgMin:
    case Op::kMax:
    case Op::kArgMax:
      if (ReplacesExtreme(left.value, right.value, op == Op::kMin || op == Op::kArgMin)) {
        out.value = right.value;
        out.index = right.index;
      }
      break;
  }
  return out;
}

}  // namespace gpureduce::kernels
