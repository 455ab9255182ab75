#pragma once

// A reduction in progress: what one block, chunk or request has seen so far. Partials of
// consecutive pieces combine left to right, which keeps ARGMIN/ARGMAX's first occurrence.
// Plain C++ usable from CUDA kernels, so every backend combines the same way.

#include <cstdint>

#include "common/extreme_order.h"
#include "common/host_device.h"
#include "common/reduction/op.h"

namespace gpureduce {

struct Partial {
  // SUM, MEAN, SUM_SQUARES: the float64 sum; PROD: the float64 product; MIN, MAX, ARGMIN,
  // ARGMAX: the extreme element (NaN once any element was NaN). Meaningless while count is 0.
  double value = 0.0;
  int64_t index = -1;  // ARGMIN/ARGMAX: position of `value` in the whole array
  uint64_t count = 0;  // elements seen
};

// `left` covers the elements before `right`. MIN and MAX partials carry no index (-1 on both
// sides), so a tie, or a NaN on both sides, keeps `left`: the earlier element either way.
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
      if (PrecedesExtreme(op == Op::kMin || op == Op::kArgMin, right.value, right.index, left.value,
                          left.index)) {
        out.value = right.value;
        out.index = right.index;
      }
      break;
    default:  // the array API's ops reduce Stats (stats.h), never a Partial
      break;
  }
  return out;
}

}  // namespace gpureduce
