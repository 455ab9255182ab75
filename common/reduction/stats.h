#pragma once

// What a piece of an array has seen, for every op at once: the accumulator of the array API
// (any dtype, the NAN forms, VAR/STD, several ops in one read). A piece fills the fields its
// request's ops need (StatsNeeds) and leaves the others at their empty values; pieces merge left
// to right (MergeStats), which keeps the arg ops' first occurrence. Finalize (op_result.h) reads
// each op's answer out of the merged whole. Plain C++ with no dependencies.

#include <cmath>
#include <cstdint>
#if !defined(__CUDACC__)
#include <span>
#endif

#include "common/reduction/dtype.h"
#include "common/reduction/op.h"

namespace gpureduce {

// Which accumulations a request's ops need; the element count, NaN count and first NaN are
// always kept.
struct StatsNeeds {
  bool sum = false;          // SUM, MEAN and their NAN forms
  bool sum_squares = false;  // SUM_SQUARES
  bool prod = false;         // PROD, NANPROD
  bool min = false;          // MIN, ARGMIN and their NAN forms (value and first index)
  bool max = false;
  bool moments = false;  // VAR, STD and their NAN forms
};

#if !defined(__CUDACC__)  // nvcc compiles C++17: no std::span there
StatsNeeds NeedsOf(std::span<const Op> ops);
#endif

struct Stats {
  uint64_t count = 0;      // elements seen, NaN or not
  uint64_t nan_count = 0;  // NaN elements among them (0 for integers)
  int64_t first_nan = -1;  // the first NaN's index in the whole array; -1: none seen
  bool integer = false;    // the elements are integers: the int_ fields hold their accumulations

  // Floats: the non-NaN elements' sum, compensated (the sum is sum + sum_lo), in float64.
  double sum = 0.0;
  double sum_lo = 0.0;
  // Integers: the exact sum is int_sum + int_sum_wraps * 2^64 (int_sum wraps as NumPy's does).
  int64_t int_sum = 0;
  int64_t int_sum_wraps = 0;

  double sum_squares = 0.0;  // of the non-NaN elements (integers too), in float64

  // Floats: the non-NaN elements' product is prod * 2^prod_exponent, prod in [0.5, 1) (or 0, inf
  // or NaN), so no partial product overflows or underflows.
  double prod = 1.0;
  int64_t prod_exponent = 0;
  // Integers: the product modulo 2^64 (NumPy's wrapped answer), whether the exact one left
  // int64's range for good (int_product.h) or is +2^63 (out by its sign alone: a later -1 brings
  // it back), and whether a factor was 0 (then the exact product is 0 and fits).
  uint64_t int_prod = 1;
  bool int_prod_overflow = false;
  bool int_prod_zero = false;
  bool int_prod_two_to_63 = false;

  // The smallest and largest non-NaN element and the first index of each (-1: none seen yet);
  // floats in min/max (every float dtype's value is a double), integers in int_min/int_max.
  double min = 0.0;
  double max = 0.0;
  int64_t int_min = 0;
  int64_t int_max = 0;
  int64_t min_index = -1;
  int64_t max_index = -1;

  // The non-NaN elements' mean and sum of squared deviations from it (Welford/Chan).
  double mean = 0.0;
  double m2 = 0.0;

  uint64_t valid() const { return count - nan_count; }  // the non-NaN elements
  // Whether the integers' exact product does not fit in int64 (the answer's `overflow`).
  bool int_prod_leaves_int64() const {
    return (int_prod_overflow || int_prod_two_to_63) && !int_prod_zero;
  }
};

// The stats of `left` followed by `right`.
Stats MergeStats(const Stats& left, const Stats& right);

// Adds `b` to the compensated sum (*hi, *lo): Neumaier's two-sum, exact in its error term; an
// infinite sum keeps no error term (it would be NaN).
inline void AddCompensated(double b, double* hi, double* lo) {
  const double a = *hi;
  const double s = a + b;
  if (!(s - s == 0.0)) {  // inf or NaN
    *hi = s;
    *lo = 0.0;
    return;
  }
  const double err = std::fabs(a) >= std::fabs(b) ? (a - s) + b : (b - s) + a;
  *hi = s;
  *lo += err;
}

}  // namespace gpureduce
