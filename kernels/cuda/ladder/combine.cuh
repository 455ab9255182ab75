#pragma once

// The ladder's element-wise pieces: how two values combine, the identity that pads a block,
// the load transform, and the atomic forms the atomic variants need. float32 throughout, as in
// the seeds.

#include <cuda_runtime.h>

#include "common/extreme_order.h"

namespace gpureduce::kernels::cuda {

// SUM, MEAN and SUM_SQUARES add (SUM_SQUARES squares on load), PROD multiplies.
enum class CombineKind { kAdd, kMul, kMin, kMax };

template <CombineKind kC>
struct CombineOp {
  __device__ static float Identity() {
    if constexpr (kC == CombineKind::kAdd) return 0.0f;
    if constexpr (kC == CombineKind::kMul) return 1.0f;
    if constexpr (kC == CombineKind::kMin) return __int_as_float(0x7f800000);  // +inf
    return __int_as_float(static_cast<int>(0xff800000u));                      // -inf
  }
  // Min and max by NumPy's rule (extreme_order.h): a NaN on either side is the answer.
  __device__ static float Apply(float a, float b) {
    if constexpr (kC == CombineKind::kAdd) return a + b;
    if constexpr (kC == CombineKind::kMul) return a * b;
    return PickExtreme(kC == CombineKind::kMin, a, b);
  }
};

// Element i of the input as the reduction sees it (squared for SUM_SQUARES's first pass).
__device__ inline float Load(const float* in, size_t i, bool square) {
  const float x = in[i];
  return square ? x * x : x;
}

// Combines `value` into *address atomically: atomicAdd for sums, a compare-and-swap loop
// otherwise (as the seeds build every atomic they lack). Works on global and shared memory.
template <CombineKind kC>
__device__ inline void AtomicCombine(float* address, float value) {
  if constexpr (kC == CombineKind::kAdd) {
    atomicAdd(address, value);
  } else {
    unsigned* bits = reinterpret_cast<unsigned*>(address);
    unsigned seen = *bits;
    while (true) {
      const unsigned wanted = __float_as_uint(CombineOp<kC>::Apply(__uint_as_float(seen), value));
      if (wanted == seen) return;  // already there: min/max settle fast this way
      const unsigned before = atomicCAS(bits, seen, wanted);
      if (before == seen) return;
      seen = before;
    }
  }
}

}  // namespace gpureduce::kernels::cuda
