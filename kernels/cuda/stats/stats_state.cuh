#pragma once

// What the stats kernel keeps per thread while it reads (ThreadStats), for one dtype and one
// group of accumulations (flags, stats_policy.h); it hands a BlockStats (stats_block.cuh) to the
// merges. A thread sees its elements in increasing index, so its extremes need strict
// comparisons only.
//
// Floats: NaNs are counted (and the first one's index kept) and skipped by every accumulation.
// A 16-byte vector with no NaN and no infinity (its elements sum to a finite float; float16 and
// bfloat16: x * 0 is 0 for each pair) takes the fast path, with no per-element checks; any other
// goes element by element.
// Sums: float64 per thread (float64 input: two-sum compensated), compensated across threads;
// int32 exactly in int64; int64 exactly in 128 bits (a carry word). Moments: shifted sums per
// thread (shift = its first non-NaN element), then Chan's merge of (n, mean, m2). Products:
// float mantissa in [0.5, 1) with the exponent apart, renormalized after each vector; integers
// wrapped modulo 2^64 with overflow and zero flags.

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/cuda/stats/stats_block.cuh"
#include "kernels/cuda/stats/stats_dtype.cuh"
#include "kernels/cuda/stats/stats_policy.h"

namespace gpureduce::kernels::cuda {

// One thread's accumulations while it reads.
template <DType kDTypeT, unsigned kFlagsT>
struct ThreadStats {
  using G = StatsGroups<kDTypeT, kFlagsT>;
  using Traits = typename G::Traits;
  using V = typename G::Value;
  static constexpr unsigned kLanes = Traits::kLanes;
  static constexpr bool kFloat64 = kDTypeT == DType::kFloat64;
  static constexpr bool kInt64 = kDTypeT == DType::kInt64;
  static constexpr V kNoExtreme = std::numeric_limits<V>::quiet_NaN();  // integers: 0
  // float16 and bfloat16 with the moments: the fast path's sum is read from the shifted sum
  // (sum = s1 + n * shift) rather than added again, one float64 addition per element fewer (the
  // five-op request is bound by the float64 pipe there). Exact where the float64 sums of the
  // elements are (a thread's few hundred float16 values always are); the vectors with a NaN or
  // an infinity keep an explicit sum, so an infinity is never turned into NaN.
  static constexpr bool kDerivedSum =
      G::kSum && G::kMoments && (kDTypeT == DType::kFloat16 || kDTypeT == DType::kBFloat16);

  uint32_t nan_count = 0;
  int64_t first_nan = -1;
  double sum = 0.0, sum_lo = 0.0;  // floats; sum_lo for float64 input only
  int64_t isum = 0;                // int32: the exact sum; int64: its low word, wrapping
  int64_t isum_hi = 0;             // int64: the carries
  double sum_squares = 0.0;
  uint32_t valid = 0;
  double shift = 0.0, s1 = 0.0, s2 = 0.0;
  uint32_t slow_valid = 0;  // kDerivedSum: elements added one by one, and their part of s1
  double slow_s1 = 0.0;
  // Floats start at NaN, which every comparison !(x >= min) takes over: no index test per vector.
  V min = kNoExtreme, max = kNoExtreme;
  int64_t min_index = -1, max_index = -1;
  double prod = 1.0;
  int64_t prod_exp = 0;
  uint64_t iprod = 1;
  uint32_t iflags = 0;

  __device__ __forceinline__ void AddFloatSum(double x) {
    if constexpr (kFloat64) {  // two-sum: the error of each addition kept in sum_lo
      const double s = sum + x;
      const double bp = s - sum;
      sum_lo += (sum - (s - bp)) + (x - bp);
      sum = s;
    } else {
      sum += x;  // float32 and narrower: a thread's few hundred float64 additions
    }
  }

  __device__ __forceinline__ void AddIntSum(V x) {
    if constexpr (kInt64) {
      const uint64_t u = static_cast<uint64_t>(x);
      const uint64_t lo = static_cast<uint64_t>(isum) + u;
      isum_hi += (lo < u ? 1 : 0) + (x < 0 ? -1 : 0);
      isum = static_cast<int64_t>(lo);
    } else {
      isum += x;
    }
  }

  __device__ __forceinline__ void AddMoment(double x) {
    if (valid == 0) shift = x;
    const double d = x - shift;
    s1 += d;
    s2 = fma(d, d, s2);
    ++valid;
  }

  // One element that is not NaN, at chunk index i.
  __device__ void AddValue(V x, int64_t i) {
    const double xd = static_cast<double>(x);
    if constexpr (G::kSum) {
      if constexpr (G::kFloat) {
        AddFloatSum(xd);
      } else {
        AddIntSum(x);
      }
    }
    if constexpr (G::kSumSquares) sum_squares = fma(xd, xd, sum_squares);
    if constexpr (G::kMoments) AddMoment(xd);
    if constexpr (kDerivedSum) {
      slow_s1 += xd - shift;
      ++slow_valid;
    }
    if constexpr (G::kExtremes) {
      if (GoesBeforeMin(x)) {
        min = x;
        min_index = i;
      }
      if (GoesBeforeMax(x)) {
        max = x;
        max_index = i;
      }
    }
    if constexpr (G::kProd && G::kInt) {
      MulWrapped(iprod, iflags, static_cast<int64_t>(x));
    } else if constexpr (G::kProd) {
      MulFactor(prod, prod_exp, xd);
    }
  }

  // One element alone (the head, the tail, a vector with a NaN or an infinity).
  __device__ void AddScalar(V x, int64_t i) {
    if constexpr (G::kFloat) {
      if (x != x) {
        ++nan_count;
        if (first_nan < 0) first_nan = i;
        return;
      }
    }
    AddValue(x, i);
  }

  // One 16-byte vector as loaded, elements i, i + 1, ... float16 and bfloat16 (Traits::kPacked)
  // are tested, widened and their extremes found on the packed pairs; their float values are
  // unpacked only for a vector with a NaN or an infinity, a new extreme, or a product.
  __device__ __forceinline__ void AddRaw(uint4 raw, int64_t i) {
    if constexpr (Traits::kPacked) {
      if (!Traits::AllFinite(raw)) {
        AddEach(Unpacked(raw), i);
        return;
      }
      double xd[kLanes];
      Traits::Widen(raw, xd);
      AddSums(xd);
      if constexpr (G::kExtremes) {
        float lo, hi;
        Traits::Extremes(raw, lo, hi);
        if (GoesBeforeMin(lo) || GoesBeforeMax(hi)) PlaceExtremes(Unpacked(raw), lo, hi, i);
      }
      if constexpr (G::kProd) AddProducts(Unpacked(raw), xd);
    } else {
      AddVector(Unpacked(raw), i);
    }
  }

  struct Lanes {
    V x[kLanes];
  };
  __device__ __forceinline__ static Lanes Unpacked(uint4 raw) {
    Lanes lanes;
    Traits::Unpack(raw, lanes.x);
    return lanes;
  }

  __device__ __forceinline__ void AddEach(const Lanes& lanes, int64_t i) {
#pragma unroll
    for (unsigned l = 0; l < kLanes; ++l) AddScalar(lanes.x[l], i + l);
  }

  // Elements i, i + 1, ... of one 16-byte vector, unpacked.
  __device__ __forceinline__ void AddVector(const Lanes& lanes, int64_t i) {
    const V(&x)[kLanes] = lanes.x;
    if constexpr (G::kFloat) {
      const V t = Tree(x);
      if (!(t - t == V(0))) {  // a NaN or an infinity (or a float overflow): element by element
        AddEach(lanes, i);
        return;
      }
    }
    double xd[kLanes];
#pragma unroll
    for (unsigned l = 0; l < kLanes; ++l) xd[l] = static_cast<double>(x[l]);
    if constexpr (G::kSum && G::kInt) {
      if constexpr (kInt64) {
#pragma unroll
        for (unsigned l = 0; l < kLanes; ++l) AddIntSum(x[l]);
      } else {
        int64_t wide[kLanes];
#pragma unroll
        for (unsigned l = 0; l < kLanes; ++l) wide[l] = x[l];
        isum += Tree(wide);
      }
    }
    AddSums(xd);
    if constexpr (G::kExtremes) {
      V lo = x[0], hi = x[0];
#pragma unroll
      for (unsigned l = 1; l < kLanes; ++l) {
        lo = Least(lo, x[l]);
        hi = Greatest(hi, x[l]);
      }
      PlaceExtremes(lanes, lo, hi, i);
    }
    if constexpr (G::kProd) AddProducts(lanes, xd);
  }

  // A vector's float sum (not integers'), sum of squares and moments, from its float64 values.
  __device__ __forceinline__ void AddSums(const double (&xd)[kLanes]) {
    if constexpr (G::kSum && G::kFloat && !kDerivedSum) {  // kDerivedSum: from s1 in ToBlock
      if constexpr (kFloat64) {
#pragma unroll
        for (unsigned l = 0; l < kLanes; ++l) AddFloatSum(xd[l]);
      } else {
        sum += Tree(xd);
      }
    }
    if constexpr (G::kSumSquares) {
#pragma unroll
      for (unsigned l = 0; l < kLanes; ++l) sum_squares = fma(xd[l], xd[l], sum_squares);
    }
    if constexpr (G::kMoments) {
      if (valid == 0) shift = xd[0];
      double d[kLanes];
#pragma unroll
      for (unsigned l = 0; l < kLanes; ++l) {
        d[l] = xd[l] - shift;
        s2 = fma(d[l], d[l], s2);
      }
      s1 += Tree(d);
      valid += kLanes;
    }
  }

  template <typename T, unsigned kN>
  __device__ __forceinline__ static T Tree(const T (&v)[kN]) {
    if constexpr (kN == 2) {
      return v[0] + v[1];
    } else if constexpr (kN == 4) {
      return (v[0] + v[1]) + (v[2] + v[3]);
    } else {
      return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
    }
  }

  // Whether a value that is not NaN replaces the thread's extreme (strictly, being later).
  // Integers: written as `index < 0 || x < min`, nvcc folded both tests into a 16-bit flag and
  // ptxas predicated the lane search (int64 five ops 6% slower on an H200); this form stays
  // predicates and a branch, as the code before the float change.
  __device__ __forceinline__ bool GoesBeforeMin(V x) const {
    if constexpr (G::kFloat) return !(x >= min);  // min NaN: none yet
    return !(min_index >= 0 && x >= min);
  }
  __device__ __forceinline__ bool GoesBeforeMax(V x) const {
    if constexpr (G::kFloat) return !(x <= max);
    return !(max_index >= 0 && x <= max);
  }

  // The least and the greatest of values with no NaN: fmin/fmax are one instruction each, where
  // a select on a comparison is two (it must keep a NaN's order). Which zero a tie of -0 and +0
  // gives does not matter: the lane is found by ==.
  __device__ __forceinline__ static V Least(V a, V b) {
    if constexpr (G::kFloat) return fmin(a, b);
    return b < a ? b : a;
  }
  __device__ __forceinline__ static V Greatest(V a, V b) {
    if constexpr (G::kFloat) return fmax(a, b);
    return b > a ? b : a;
  }

  // A vector with no NaN and its least and greatest value: the lane only when it goes before
  // the thread's extreme (its first occurrence).
  __device__ __forceinline__ void PlaceExtremes(const Lanes& lanes, V lo, V hi, int64_t i) {
    const V(&x)[kLanes] = lanes.x;
    if (GoesBeforeMin(lo)) {
      int64_t at = i + kLanes - 1;
      V value = x[kLanes - 1];
#pragma unroll
      for (int l = kLanes - 2; l >= 0; --l) {
        if (x[l] == lo) {
          at = i + l;
          value = x[l];
        }
      }
      min = value;
      min_index = at;
    }
    if (GoesBeforeMax(hi)) {
      int64_t at = i + kLanes - 1;
      V value = x[kLanes - 1];
#pragma unroll
      for (int l = kLanes - 2; l >= 0; --l) {
        if (x[l] == hi) {
          at = i + l;
          value = x[l];
        }
      }
      max = value;
      max_index = at;
    }
  }

  // A vector of finite values (floats) or integers.
  __device__ __forceinline__ void AddProducts(const Lanes& lanes, const double (&xd)[kLanes]) {
    const V(&x)[kLanes] = lanes.x;
    if constexpr (kDTypeT == DType::kInt32) {
      MulWrapped(iprod, iflags, int64_t{x[0]} * x[1]);  // pairs are exact in int64
      MulWrapped(iprod, iflags, int64_t{x[2]} * x[3]);
    } else if constexpr (kInt64) {
      MulWrapped(iprod, iflags, x[0]);
      MulWrapped(iprod, iflags, x[1]);
    } else if constexpr (kFloat64) {
      MulFactor(prod, prod_exp, xd[0]);
      MulFactor(prod, prod_exp, xd[1]);
    } else if constexpr (kDTypeT == DType::kFloat16) {
      // float16 pairs multiply exactly in float32 (22 bits, 2^-48 to 2^32); four such in float64
      // stay within 2^-192 to 2^128.
      const double a = static_cast<double>(x[0] * x[1]) * static_cast<double>(x[2] * x[3]);
      const double b = static_cast<double>(x[4] * x[5]) * static_cast<double>(x[6] * x[7]);
      prod *= a * b;
      Renormalize(prod, prod_exp);
    } else {
      // float32 and bfloat16 (2^-149 to 2^128): four factors in float64 stay within 2^-596 to
      // 2^512, so the mantissa stays normal.
#pragma unroll
      for (unsigned g = 0; g < kLanes; g += 4) {
        prod *= (xd[g] * xd[g + 1]) * (xd[g + 2] * xd[g + 3]);
        Renormalize(prod, prod_exp);
      }
    }
  }

  __device__ BlockStats<kDTypeT, kFlagsT> ToBlock() const {
    BlockStats<kDTypeT, kFlagsT> b;
    if constexpr (G::kFloat) {
      b.nan_count = nan_count;
      b.first_nan = first_nan;
    }
    if constexpr (G::kSum && G::kInt) {
      b.isum_lo = static_cast<uint64_t>(isum);
      b.isum_hi = kInt64 ? isum_hi : (isum < 0 ? -1 : 0);
    } else if constexpr (kDerivedSum) {
      // An infinite or NaN explicit sum (from the slow path) is the answer as it stands.
      b.sum = !(sum - sum == 0.0)
                  ? sum
                  : sum + ((s1 - slow_s1) + static_cast<double>(valid - slow_valid) * shift);
    } else if constexpr (G::kSum) {
      b.sum = sum;
      b.sum_lo = (kFloat64 && sum - sum == 0.0) ? sum_lo : 0.0;
    }
    if constexpr (G::kSumSquares) b.sum_squares = sum_squares;
    if constexpr (G::kMoments) {
      b.valid = valid;
      if (valid != 0) {
        const double mean_shifted = s1 / static_cast<double>(valid);
        b.mean = shift + mean_shifted;
        b.m2 = s2 - s1 * mean_shifted;
        if (b.m2 < 0.0) b.m2 = 0.0;  // rounding; NaN stays NaN
      }
    }
    if constexpr (G::kExtremes) {
      b.min = min_index >= 0 ? min : V{};  // not the NaN that stood for none
      b.max = max_index >= 0 ? max : V{};
      b.min_index = min_index;
      b.max_index = max_index;
    }
    if constexpr (G::kProd && G::kInt) {
      b.iprod = iprod;
      b.iflags = iflags;
    } else if constexpr (G::kProd) {
      b.prod = prod;
      b.prod_exp = prod_exp;
    }
    return b;
  }
};

}  // namespace gpureduce::kernels::cuda
