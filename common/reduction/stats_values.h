#pragma once

// The values FinalizeOp reads out of a Stats, shared with the batched encoder
// (answer_encoding.h) so that both give the same bits.

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "common/reduction/stats.h"

namespace gpureduce {

__extension__ using Int128 = __int128;

// The exact sum of integers, wrapped or not.
inline Int128 ExactIntSum(const Stats& stats) {
  return static_cast<Int128>(stats.int_sum) +
         static_cast<Int128>(stats.int_sum_wraps) * 2 * (Int128{1} << 63);
}

inline double FloatSum(const Stats& stats) {
  if (stats.integer) return static_cast<double>(ExactIntSum(stats));
  return stats.sum + stats.sum_lo;
}

inline double FloatProd(const Stats& stats) {
  // ldexp takes an int; past +-2^20 the answer is 0 or infinite either way.
  const int64_t exponent = std::clamp<int64_t>(stats.prod_exponent, -(1 << 20), 1 << 20);
  return std::ldexp(stats.prod, static_cast<int>(exponent));
}

}  // namespace gpureduce
