#pragma once

// Whether two Stats hold the same values bit for bit, field by field (a memcmp of the structs
// would also compare their padding, which no code writes on purpose).

#include <bit>
#include <cstdint>

#include "common/reduction/stats.h"

namespace gpureduce::testing {

inline bool SameStatsBits(const Stats& a, const Stats& b) {
  const auto bits = [](double x) { return std::bit_cast<uint64_t>(x); };
  return a.count == b.count && a.nan_count == b.nan_count && a.first_nan == b.first_nan &&
         a.integer == b.integer && bits(a.sum) == bits(b.sum) && bits(a.sum_lo) == bits(b.sum_lo) &&
         a.int_sum == b.int_sum && a.int_sum_wraps == b.int_sum_wraps &&
         bits(a.sum_squares) == bits(b.sum_squares) && bits(a.prod) == bits(b.prod) &&
         a.prod_exponent == b.prod_exponent && a.int_prod == b.int_prod &&
         a.int_prod_overflow == b.int_prod_overflow && a.int_prod_zero == b.int_prod_zero &&
         a.int_prod_two_to_63 == b.int_prod_two_to_63 && bits(a.min) == bits(b.min) &&
         bits(a.max) == bits(b.max) && a.int_min == b.int_min && a.int_max == b.int_max &&
         a.min_index == b.min_index && a.max_index == b.max_index && bits(a.mean) == bits(b.mean) &&
         bits(a.m2) == bits(b.m2);
}

}  // namespace gpureduce::testing
