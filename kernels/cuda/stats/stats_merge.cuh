#pragma once

// A chunk's BlockStats as the Stats of the whole array's elements base_index.., and MergeStats
// (common/reduction/stats.cc) on the device, rule for rule: the last block folds each chunk into
// the request's running Stats with it, so the GPU's answer reads the same as the CPU's.

#include <cuda_runtime.h>

#include <cstdint>

#include "common/reduction/int_product.h"
#include "kernels/cuda/stats/stats_block.cuh"
#include "kernels/cuda/stats/stats_launch.h"

namespace gpureduce::kernels::cuda {

template <DType kDTypeT, unsigned kFlagsT>
__device__ DeviceStats ToDeviceStats(const BlockStats<kDTypeT, kFlagsT>& b, uint64_t n,
                                     uint64_t base_index) {
  using G = StatsGroups<kDTypeT, kFlagsT>;
  const int64_t base = static_cast<int64_t>(base_index);
  DeviceStats s;
  s.count = n;
  s.integer = G::kInt;
  if constexpr (G::kFloat) {
    s.nan_count = b.nan_count;
    s.first_nan = b.first_nan >= 0 ? base + b.first_nan : -1;
  }
  if constexpr (G::kSum && G::kInt) {
    s.int_sum = static_cast<int64_t>(b.isum_lo);
    s.int_sum_wraps = b.isum_hi + (s.int_sum < 0 ? 1 : 0);  // exact = int_sum + wraps * 2^64
  } else if constexpr (G::kSum) {
    s.sum = b.sum;
    s.sum_lo = b.sum_lo;
  }
  if constexpr (G::kSumSquares) s.sum_squares = b.sum_squares;
  if constexpr (G::kMoments) {
    s.mean = b.mean;
    s.m2 = b.m2;
  }
  if constexpr (G::kExtremes) {
    s.min = static_cast<double>(b.min);
    s.max = static_cast<double>(b.max);
    if constexpr (G::kInt) {
      s.int_min = b.min;
      s.int_max = b.max;
    }
    s.min_index = b.min_index >= 0 ? base + b.min_index : -1;
    s.max_index = b.max_index >= 0 ? base + b.max_index : -1;
  }
  if constexpr (G::kProd && G::kInt) {
    s.int_prod = b.iprod;
    s.int_prod_overflow = (b.iflags & kIntProdOverflow) != 0;
    s.int_prod_zero = (b.iflags & kIntProdZero) != 0;
    s.int_prod_two_to_63 = (b.iflags & kIntProdTwoTo63) != 0;
  } else if constexpr (G::kProd) {
    s.prod = b.prod;
    s.prod_exponent = b.prod_exp;
  }
  return s;
}

// common/reduction/stats.h's AddCompensated.
__device__ inline void AddCompensatedDevice(double b, double* hi, double* lo) {
  const double a = *hi;
  const double s = a + b;
  if (!(s - s == 0.0)) {
    *hi = s;
    *lo = 0.0;
    return;
  }
  const double err = fabs(a) >= fabs(b) ? (a - s) + b : (b - s) + a;
  *hi = s;
  *lo += err;
}

// MergeStats(left, right): the stats of `left` followed by `right`.
__device__ inline DeviceStats MergeDeviceStats(const DeviceStats& left, const DeviceStats& right) {
  if (right.count == 0) return left;
  if (left.count == 0) return right;
  DeviceStats out = left;
  out.count = left.count + right.count;
  out.nan_count = left.nan_count + right.nan_count;
  if (out.first_nan < 0) out.first_nan = right.first_nan;

  AddCompensatedDevice(right.sum, &out.sum, &out.sum_lo);
  out.sum_lo += right.sum_lo;
  const int64_t int_sum = static_cast<int64_t>(static_cast<uint64_t>(left.int_sum) +
                                               static_cast<uint64_t>(right.int_sum));
  const bool carried = ((left.int_sum ^ int_sum) & (right.int_sum ^ int_sum)) < 0;
  out.int_sum = int_sum;
  out.int_sum_wraps =
      left.int_sum_wraps + right.int_sum_wraps + (carried ? (right.int_sum < 0 ? -1 : 1) : 0);
  out.sum_squares = left.sum_squares + right.sum_squares;

  // Products (MergeProducts): frexp of the mantissas' product.
  const double prod = out.prod * right.prod;
  int exponent = 0;
  out.prod = (prod == 0.0 || !(prod - prod == 0.0)) ? prod : frexp(prod, &exponent);
  out.prod_exponent += right.prod_exponent + exponent;
  const IntProductRange range = RangeOfProduct(out.int_prod, out.int_prod_two_to_63, right.int_prod,
                                               right.int_prod_two_to_63);
  out.int_prod_overflow = out.int_prod_overflow || right.int_prod_overflow || range.leaves;
  out.int_prod_two_to_63 = !out.int_prod_overflow && range.two_to_63;
  out.int_prod *= right.int_prod;
  out.int_prod_zero = out.int_prod_zero || right.int_prod_zero;

  // Extremes (MergeExtremes): ties keep the left, the earlier.
  if (right.min_index >= 0) {
    const bool take =
        out.min_index < 0 || (out.integer ? right.int_min < out.int_min : right.min < out.min);
    if (take) {
      out.min = right.min;
      out.int_min = right.int_min;
      out.min_index = right.min_index;
    }
  }
  if (right.max_index >= 0) {
    const bool take =
        out.max_index < 0 || (out.integer ? right.int_max > out.int_max : right.max > out.max);
    if (take) {
      out.max = right.max;
      out.int_max = right.int_max;
      out.max_index = right.max_index;
    }
  }

  // Moments (MergeMoments): Chan.
  const double n_left = static_cast<double>(left.count - left.nan_count);
  const double n_right = static_cast<double>(right.count - right.nan_count);
  if (n_right != 0) {
    if (n_left == 0) {
      out.mean = right.mean;
      out.m2 = right.m2;
    } else {
      const double n = n_left + n_right;
      const double delta = right.mean - left.mean;
      out.mean = left.mean + delta * (n_right / n);
      out.m2 = left.m2 + right.m2 + delta * delta * (n_left * n_right / n);
    }
  }
  return out;
}

}  // namespace gpureduce::kernels::cuda
