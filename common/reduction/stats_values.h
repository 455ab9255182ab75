#pragma once

// The values FinalizeOp reads out of a Stats, shared with the batched encoder
// (answer_encoding.h) so that both give the same bits.

#include <algorithm>
#include <bit>
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
  // Where 2^exponent is a normal double, one multiply: the same single rounding as ldexp's, which
  // took a tenth of the rows of 16 float32 PROD (one thread of the dev VM).
  if (stats.prod_exponent >= -1022 && stats.prod_exponent <= 1023) {
    const auto biased = static_cast<uint64_t>(stats.prod_exponent + 1023);
    return stats.prod * std::bit_cast<double>(biased << 52);
  }
  // ldexp takes an int; past +-2^20 the answer is 0 or infinite either way.
  const int64_t exponent = std::clamp<int64_t>(stats.prod_exponent, -(1 << 20), 1 << 20);
  return std::ldexp(stats.prod, static_cast<int>(exponent));
}

}  // namespace gpureduce
