#pragma once

// What the stats kernel merges across threads, warps and blocks (BlockStats) for one dtype and
// one group of accumulations, and the float and integer product steps both it and ThreadStats
// (stats_state.cuh) take. Merges compare indices, so they may run in any order; the kernel's
// merge tree is fixed, so its result is deterministic.

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "common/reduction/int_product.h"
#include "kernels/cuda/stats/stats_dtype.cuh"
#include "kernels/cuda/stats/stats_policy.h"

namespace gpureduce::kernels::cuda {

inline constexpr uint32_t kIntProdOverflow = 1u;
inline constexpr uint32_t kIntProdZero = 2u;
inline constexpr uint32_t kIntProdTwoTo63 = 4u;  // the exact product is +2^63 (int_product.h)

// p * 2^e with p in [0.5, 1) again after multiplications that left p normal (or 0, inf, NaN,
// which stay as they are).
__device__ __forceinline__ void Renormalize(double& p, int64_t& e) {
  const int hi = __double2hiint(p);
  const int biased = (hi >> 20) & 0x7ff;
  if (biased == 0x7ff) return;  // inf, NaN
  if (biased == 0) {            // zero; a subnormal only by a caller's mistake, still exact
    if (p != 0.0) {
      int ex = 0;
      p = frexp(p, &ex);
      e += ex;
    }
    return;
  }
  e += biased - 1022;
  p = __hiloint2double((hi & 0x800fffff) | 0x3fe00000, __double2loint(p));
}

// Multiplies the mantissa by a float64 factor of any magnitude (subnormal, huge) exactly.
__device__ __forceinline__ void MulFactor(double& p, int64_t& e, double x) {
  if (x == 0.0 || !(x - x == 0.0)) {
    p *= x;
  } else {
    int ex = 0;
    p *= frexp(x, &ex);
    e += ex;
  }
  Renormalize(p, e);
}

// The wrapped product p * q (q's flags `q_flags`) and the exact one's range (int_product.h's
// three states in kIntProdOverflow and kIntProdTwoTo63; a factor of 0: kIntProdZero).
__device__ __forceinline__ void MulProducts(uint64_t& p, uint32_t& flags, uint64_t q,
                                            uint32_t q_flags) {
  const IntProductRange range =
      RangeOfProduct(p, (flags & kIntProdTwoTo63) != 0, q, (q_flags & kIntProdTwoTo63) != 0);
  flags = (flags | q_flags) & ~kIntProdTwoTo63;
  if (range.leaves) flags |= kIntProdOverflow;
  if (range.two_to_63 && !(flags & kIntProdOverflow)) flags |= kIntProdTwoTo63;
  p *= q;
}

// One factor x (0 sets kIntProdZero).
__device__ __forceinline__ void MulWrapped(uint64_t& p, uint32_t& flags, int64_t x) {
  MulProducts(p, flags, static_cast<uint64_t>(x), x == 0 ? kIntProdZero : 0u);
}

// 1 / n for a count n >= 1 (below 2^53): float's reciprocal refined by two Newton steps, within
// an ulp of the quotient; a division is a call with branches on the GPU, on the path of every
// merge level.
__device__ __forceinline__ double Reciprocal(double n) {
  double r = static_cast<double>(__frcp_rn(static_cast<float>(n)));
  r = fma(r, fma(-n, r, 1.0), r);
  return fma(r, fma(-n, r, 1.0), r);
}

// The parts of a BlockStats; an empty one where its group is off (empty bases take no room).
template <bool kOnT>
struct NanPart {};
template <>
struct NanPart<true> {
  uint64_t nan_count = 0;
  int64_t first_nan = -1;
};
template <bool kOnT, bool kIntT>
struct SumPart {};
template <>
struct SumPart<true, false> {
  double sum = 0.0;  // compensated: sum + sum_lo
  double sum_lo = 0.0;
};
template <>
struct SumPart<true, true> {
  uint64_t isum_lo = 0;  // exact: isum_hi * 2^64 + isum_lo
  int64_t isum_hi = 0;
};
template <bool kOnT>
struct SumSquaresPart {};
template <>
struct SumSquaresPart<true> {
  double sum_squares = 0.0;
};
template <bool kOnT>
struct MomentPart {};
template <>
struct MomentPart<true> {
  uint64_t valid = 0;  // non-NaN elements
  double mean = 0.0;
  double m2 = 0.0;
};
template <bool kOnT, typename ValueT>
struct ExtremePart {};
template <typename ValueT>
struct ExtremePart<true, ValueT> {
  ValueT min{};
  ValueT max{};
  int64_t min_index = -1;  // chunk index; -1: none yet
  int64_t max_index = -1;
};
template <bool kOnT, bool kIntT>
struct ProdPart {};
template <>
struct ProdPart<true, false> {
  double prod = 1.0;
  int64_t prod_exp = 0;
};
template <>
struct ProdPart<true, true> {
  uint64_t iprod = 1;
  uint32_t iflags = 0;
  uint32_t unused = 0;
};

template <DType kDTypeT, unsigned kFlagsT>
struct StatsGroups {
  using Traits = StatsDType<kDTypeT>;
  using Value = typename Traits::Value;
  static constexpr bool kFloat = Traits::kFloat;
  static constexpr bool kInt = !Traits::kFloat;
  static constexpr bool kSum = (kFlagsT & kStatsSum) != 0;
  static constexpr bool kSumSquares = (kFlagsT & kStatsSumSquares) != 0;
  static constexpr bool kMoments = (kFlagsT & kStatsMoments) != 0;
  static constexpr bool kExtremes = (kFlagsT & kStatsExtremes) != 0;
  static constexpr bool kProd = (kFlagsT & kStatsProd) != 0;
};

// A group of threads' (a warp's, a block's, a chunk's) merged accumulations.
template <DType kDTypeT, unsigned kFlagsT, typename G = StatsGroups<kDTypeT, kFlagsT>>
struct BlockStats : NanPart<G::kFloat>,
                    SumPart<G::kSum, G::kInt>,
                    SumSquaresPart<G::kSumSquares>,
                    MomentPart<G::kMoments>,
                    ExtremePart<G::kExtremes, typename G::Value>,
                    ProdPart<G::kProd, G::kInt> {
  __device__ void Merge(const BlockStats& o) {
    if constexpr (G::kFloat) {
      this->nan_count += o.nan_count;
      if (o.first_nan >= 0 && (this->first_nan < 0 || o.first_nan < this->first_nan)) {
        this->first_nan = o.first_nan;
      }
    }
    if constexpr (G::kSum && G::kInt) {
      const uint64_t lo = this->isum_lo + o.isum_lo;
      this->isum_hi += o.isum_hi + (lo < o.isum_lo ? 1 : 0);
      this->isum_lo = lo;
    } else if constexpr (G::kSum) {
      const double a = this->sum, b = o.sum, s = a + b;
      if (!(s - s == 0.0)) {
        this->sum = s;
        this->sum_lo = 0.0;
      } else {
        const double bp = s - a;
        const double err = (a - (s - bp)) + (b - bp);
        this->sum = s;
        this->sum_lo += o.sum_lo + err;
      }
    }
    if constexpr (G::kSumSquares) this->sum_squares += o.sum_squares;
    if constexpr (G::kMoments) {
      if (o.valid != 0) {
        if (this->valid == 0) {
          this->valid = o.valid;
          this->mean = o.mean;
          this->m2 = o.m2;
        } else {
          const double na = static_cast<double>(this->valid), nb = static_cast<double>(o.valid);
          const double inverse = Reciprocal(na + nb);
          const double delta = o.mean - this->mean;
          this->mean += delta * (nb * inverse);
          this->m2 += o.m2 + delta * delta * (na * nb * inverse);
          this->valid += o.valid;
        }
      }
    }
    if constexpr (G::kExtremes) {
      if (o.min_index >= 0 && (this->min_index < 0 || o.min < this->min ||
                               (o.min == this->min && o.min_index < this->min_index))) {
        this->min = o.min;
        this->min_index = o.min_index;
      }
      if (o.max_index >= 0 && (this->max_index < 0 || o.max > this->max ||
                               (o.max == this->max && o.max_index < this->max_index))) {
        this->max = o.max;
        this->max_index = o.max_index;
      }
    }
    if constexpr (G::kProd && G::kInt) {
      MulProducts(this->iprod, this->iflags, o.iprod, o.iflags);
    } else if constexpr (G::kProd) {
      this->prod *= o.prod;  // both in [0.5, 1): the product is normal
      this->prod_exp += o.prod_exp;
      Renormalize(this->prod, this->prod_exp);
    }
  }

  __device__ BlockStats ShuffleDown(unsigned delta) const {
    if constexpr (std::is_empty_v<BlockStats>) {
      return *this;
    } else {
      static_assert(sizeof(BlockStats) % sizeof(unsigned) == 0);
      BlockStats out;
      const unsigned* from = reinterpret_cast<const unsigned*>(this);
      unsigned* to = reinterpret_cast<unsigned*>(&out);
#pragma unroll
      for (unsigned w = 0; w < sizeof(BlockStats) / sizeof(unsigned); ++w) {
        to[w] = __shfl_down_sync(0xffffffffu, from[w], delta);
      }
      return out;
    }
  }
};

}  // namespace gpureduce::kernels::cuda
