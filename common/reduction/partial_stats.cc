#include "common/reduction/partial_stats.h"

#include <cmath>

namespace gpureduce {

Stats StatsFromPartial(Op op, const Partial& partial) {
  Stats stats;
  stats.count = partial.count;
  if (partial.count == 0) return stats;
  const bool nan = std::isnan(partial.value);
  switch (op) {
    case Op::kSum:
    case Op::kMean:
      stats.sum = partial.value;  // a NaN stays one through the merge and the division
      break;
    case Op::kSumSquares:
      stats.sum_squares = partial.value;
      break;
    case Op::kProd: {
      int exponent = 0;
      stats.prod = std::frexp(partial.value, &exponent);
      stats.prod_exponent = exponent;
      break;
    }
    case Op::kMin:
    case Op::kMax:
    case Op::kArgMin:
    case Op::kArgMax: {
      // A classic partial's extreme is NaN once any element was (its index the first NaN's):
      // as Stats, a NaN seen there; else the extreme of the non-NaN elements. MIN and MAX carry
      // no index: 0 marks the extreme as seen, and they never report it.
      const int64_t index = partial.index >= 0 ? partial.index : 0;
      if (nan) {
        stats.nan_count = 1;
        stats.first_nan = index;
      } else if (op == Op::kMin || op == Op::kArgMin) {
        stats.min = partial.value;
        stats.min_index = index;
      } else {
        stats.max = partial.value;
        stats.max_index = index;
      }
      break;
    }
    default:
      break;
  }
  return stats;
}

}  // namespace gpureduce
