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

#include "kernels/partial.h"

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

// NumPy's min/max: PTX min.NaN / max.NaN return NaN when either input is NaN, in one instruction.
template <bool kLess>
__device__ inline float ExtremeNaN(float a, float b) {
  float out;
  if constexpr (kLess) {
    asm("min.NaN.f32 %0, %1, %2;" : "=f"(out) : "f"(a), "f"(b));
  } else {
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(out) : "f"(a), "f"(b));
  }
  return out;
}

template <bool kLess>
struct ExtremeAccumulator {
  float value = kLess ? __builtin_huge_valf() : -__builtin_huge_valf();

  __device__ void Add(float x, int64_t) { value = ExtremeNaN<kLess>(value, x); }
  __device__ void Add4(float4 v, int64_t) {
    value = ExtremeNaN<kLess>(
        value, ExtremeNaN<kLess>(ExtremeNaN<kLess>(v.x, v.y), ExtremeNaN<kLess>(v.z, v.w)));
  }
  __device__ void Merge(const ExtremeAccumulator& other) {
    value = ExtremeNaN<kLess>(value, other.value);
  }
  __device__ ExtremeAccumulator ShuffleDown(unsigned delta) const {
    return {__shfl_down_sync(0xffffffffu, value, delta)};
  }
  __device__ Partial ToPartial(uint64_t n, uint64_t) const { return ChunkPartial(value, n); }
};

// ARGMIN (kLess) and ARGMAX: the first NaN, else the first occurrence of the extreme value.
template <bool kLess>
struct ArgExtremeAccumulator {
  float value = 0;
  int64_t index = -1;  // -1: no element yet

  // Within one thread elements come in increasing index: only a strict improvement (or a first
  // NaN) replaces, which keeps the earliest.
  __device__ void Add(float x, int64_t i) {
    const bool better = kLess ? x < value : x > value;
    if (index < 0 || (value == value && (better || x != x))) {
      value = x;
      index = i;
    }
  }
  __device__ void Add4(float4 v, int64_t i) {
    // Most vectors hold nothing better: test the vector's extreme (NaN if any element is) before
    // each element. Once a NaN is held nothing replaces it.
    const float best = ExtremeNaN<kLess>(ExtremeNaN<kLess>(v.x, v.y), ExtremeNaN<kLess>(v.z, v.w));
    const bool better = kLess ? best < value : best > value;
    if (index >= 0 && (value != value || (!better && best == best))) return;
    Add(v.x, i);
    Add(v.y, i + 1);
    Add(v.z, i + 2);
    Add(v.w, i + 3);
  }
  // A total order (NaN first, then the extreme, ties to the lower index), so merges commute.
  __device__ void Merge(const ArgExtremeAccumulator& other) {
    if (other.index < 0) return;
    bool take;
    if (index < 0) {
      take = true;
    } else {
      const bool mine_nan = value != value, other_nan = other.value != other.value;
      if (mine_nan || other_nan) {
        take = other_nan && (!mine_nan || other.index < index);
      } else if (other.value == value) {
        take = other.index < index;
      } else {
        take = kLess ? other.value < value : other.value > value;
      }
    }
    if (take) *this = other;
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

}  // namespace gpureduce::kernels::cuda
