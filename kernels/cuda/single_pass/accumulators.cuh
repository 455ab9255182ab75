#pragma once

// What one thread of `single_pass` keeps while it reads, per op. Each accumulator is a small
// trivially copyable state with:
//   Add(x, i)        element x at chunk index i (elements reach a thread in increasing i),
//   Add4(v, i)       four consecutive elements starting at i,
//   Merge(other)     the state of any other set of elements (any order: merges commute),
//   ShuffleDown(d)   the state of lane + d, for warp reductions,
//   ToPartial(n, b)  the chunk's Partial, with ARG indices offset by b.
// A default-constructed state is the identity.

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "common/extreme_order.h"
#include "common/reduction/partial.h"
#include "kernels/op_dispatch.h"

namespace gpureduce::kernels::cuda {

enum class SumInput { kValue, kSquare };

// The Partial of a chunk of n elements whose reduction is `value` (at chunk index `index`).
__device__ inline Partial ChunkPartial(double value, uint64_t n, int64_t index = -1) {
  Partial out;
  out.value = value;
  out.index = index;
  out.count = n;
  return out;
}

// SUM and MEAN (kValue), SUM_SQUARES (kSquare), accumulated in AccT: double in production,
// float only for the benchmark's float32-accumulating comparison.
template <typename AccT, SumInput kInput>
struct SumAccumulator {
  AccT sum = 0;

  __device__ static AccT In(float x) {
    const AccT v = static_cast<AccT>(x);
    return kInput == SumInput::kSquare ? v * v : v;
  }
  __device__ void Add(float x, int64_t) { sum += In(x); }
  __device__ void Add4(float4 v, int64_t) { sum += (In(v.x) + In(v.y)) + (In(v.z) + In(v.w)); }
  __device__ void Merge(const SumAccumulator& other) { sum += other.sum; }
  __device__ SumAccumulator ShuffleDown(unsigned delta) const {
    return {__shfl_down_sync(0xffffffffu, sum, delta)};
  }
  __device__ Partial ToPartial(uint64_t n, uint64_t) const {
    return ChunkPartial(static_cast<double>(sum), n);
  }
};

struct ProdAccumulator {
  double product = 1.0;

  __device__ void Add(float x, int64_t) { product *= x; }
  __device__ void Add4(float4 v, int64_t) { product *= (double{v.x} * v.y) * (double{v.z} * v.w); }
  __device__ void Merge(const ProdAccumulator& other) { product *= other.product; }
  __device__ ProdAccumulator ShuffleDown(unsigned delta) const {
    return {__shfl_down_sync(0xffffffffu, product, delta)};
  }
  __device__ Partial ToPartial(uint64_t n, uint64_t) const { return ChunkPartial(product, n); }
};

// MIN (kLess) and MAX by extreme_order.h's rule (min.NaN / max.NaN on the device).
template <bool kLess>
struct ExtremeAccumulator {
  float value = kLess ? __builtin_huge_valf() : -__builtin_huge_valf();

  __device__ static float Pick(float a, float b) { return PickExtreme(kLess, a, b); }
  __device__ void Add(float x, int64_t) { value = Pick(value, x); }
  __device__ void Add4(float4 v, int64_t) {
    value = Pick(value, Pick(Pick(v.x, v.y), Pick(v.z, v.w)));
  }
  __device__ void Merge(const ExtremeAccumulator& other) { value = Pick(value, other.value); }
  __device__ ExtremeAccumulator ShuffleDown(unsigned delta) const {
    return {__shfl_down_sync(0xffffffffu, value, delta)};
  }
  __device__ Partial ToPartial(uint64_t n, uint64_t) const { return ChunkPartial(value, n); }
};

// ARGMIN (kLess) and ARGMAX: the first element in extreme_order.h's order.
template <bool kLess>
struct ArgExtremeAccumulator {
  float value = 0;
  int64_t index = -1;  // -1: no element yet

  // Within one thread elements come in increasing index, so a new one only needs LaterPrecedes.
  __device__ void Add(float x, int64_t i) {
    if (index < 0 || LaterPrecedes(kLess, x, value)) {
      value = x;
      index = i;
    }
  }
  __device__ void Add4(float4 v, int64_t i) {
    // Most vectors hold nothing that goes first: the vector's extreme (NaN if any element is)
    // goes first exactly when one of its elements does, so test it before each element.
    const float best =
        PickExtreme(kLess, PickExtreme(kLess, v.x, v.y), PickExtreme(kLess, v.z, v.w));
    if (index >= 0 && !LaterPrecedes(kLess, best, value)) return;
    Add(v.x, i);
    Add(v.y, i + 1);
    Add(v.z, i + 2);
    Add(v.w, i + 3);
  }
  // The order is total on distinct indices, so merges commute.
  __device__ void Merge(const ArgExtremeAccumulator& other) {
    if (other.index >= 0 &&
        (index < 0 || PrecedesExtreme(kLess, other.value, other.index, value, index))) {
      *this = other;
    }
  }
  __device__ ArgExtremeAccumulator ShuffleDown(unsigned delta) const {
    return {
        __shfl_down_sync(0xffffffffu, value, delta),
        static_cast<int64_t>(__shfl_down_sync(0xffffffffu, static_cast<long long>(index), delta))};
  }
  __device__ Partial ToPartial(uint64_t n, uint64_t base_index) const {
    return ChunkPartial(value, n, static_cast<int64_t>(base_index) + index);
  }
};

// single_pass's accumulator for each reduction of op_dispatch.h: float64 sums and products.
template <typename ReductionT>
using SinglePassAccumulator = std::conditional_t<
    ReductionT::kKind == ReductionKind::kSum,
    SumAccumulator<double, ReductionT::kSquares ? SumInput::kSquare : SumInput::kValue>,
    std::conditional_t<ReductionT::kKind == ReductionKind::kProduct, ProdAccumulator,
                       std::conditional_t<ReductionT::kKind == ReductionKind::kExtreme,
                                          ExtremeAccumulator<ReductionT::kLess>,
                                          ArgExtremeAccumulator<ReductionT::kLess>>>>;

}  // namespace gpureduce::kernels::cuda
