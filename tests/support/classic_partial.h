#pragma once

// The runtime answers every request as Stats; tests of the classic float32 ops read them as the
// Partial the classic kernels make (MEAN's value is the sum, MIN and MAX carry no index), so their
// checks stay those of the classic contract.

#include <cmath>

#include "absl/status/statusor.h"
#include "common/reduction/op.h"
#include "common/reduction/partial.h"
#include "common/reduction/stats.h"

namespace gpureduce::testing {

inline Partial ClassicPartial(Op op, const Stats& stats) {
  Partial out;
  out.count = stats.count;
  if (stats.count == 0) {
    if (op == Op::kProd) out.value = 1.0;
    return out;
  }
  const bool nan = stats.nan_count > 0;
  const double kNan = std::nan("");
  switch (op) {
    case Op::kSum:
    case Op::kMean:
      out.value = nan ? kNan : stats.sum + stats.sum_lo;
      break;
    case Op::kSumSquares:
      out.value = nan ? kNan : stats.sum_squares;
      break;
    case Op::kProd:
      out.value =
          nan ? kNan
              : std::ldexp(stats.prod,
                           static_cast<int>(std::fmax(-1e6, std::fmin(1e6, stats.prod_exponent))));
      break;
    case Op::kMin:
    case Op::kArgMin:
      out.value = nan ? kNan : stats.min;
      if (op == Op::kArgMin) out.index = nan ? stats.first_nan : stats.min_index;
      break;
    case Op::kMax:
    case Op::kArgMax:
      out.value = nan ? kNan : stats.max;
      if (op == Op::kArgMax) out.index = nan ? stats.first_nan : stats.max_index;
      break;
    default:
      break;
  }
  return out;
}

inline absl::StatusOr<Partial> ClassicPartial(Op op, const absl::StatusOr<Stats>& stats) {
  if (!stats.ok()) return stats.status();
  return ClassicPartial(op, *stats);
}

}  // namespace gpureduce::testing
