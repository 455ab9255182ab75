#pragma once

// Steps 3-6 of the ladder: a shared-memory tree per block, each block writing its partial
// (out[blockIdx.x]); the dispatch reduces the partials in further passes. blockDim.x is a power
// of two; the dynamic shared memory holds blockDim.x floats.

#include "kernels/cuda/ladder/combine.cuh"

namespace gpureduce::kernels::cuda {

// One element per thread, padded with the identity past the end.
template <CombineKind kC>
__device__ inline float LoadOne(const float* in, size_t n, bool square) {
  const size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  return i < n ? Load(in, i, square) : CombineOp<kC>::Identity();
}

// Two elements per thread, blockDim.x apart: the first add during the load (004 reduce3).
template <CombineKind kC>
__device__ inline float LoadTwo(const float* in, size_t n, bool square) {
  const size_t i = size_t{blockIdx.x} * blockDim.x * 2 + threadIdx.x;
  float value = i < n ? Load(in, i, square) : CombineOp<kC>::Identity();
  if (i + blockDim.x < n) value = CombineOp<kC>::Apply(value, Load(in, i + blockDim.x, square));
  return value;
}

// 004 reduce0: interleaved addressing; `tid % (2s)` leaves most threads of every warp idle.
template <CombineKind kC>
__global__ void InterleavedDivergentKernel(const float* in, size_t n, bool square, float* out) {
  extern __shared__ float sdata[];
  const unsigned tid = threadIdx.x;
  sdata[tid] = LoadOne<kC>(in, n, square);
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    if (tid % (2 * s) == 0) sdata[tid] = CombineOp<kC>::Apply(sdata[tid], sdata[tid + s]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// 004 reduce1: a strided index keeps whole warps busy, but the stride makes bank conflicts.
template <CombineKind kC>
__global__ void InterleavedStridedKernel(const float* in, size_t n, bool square, float* out) {
  extern __shared__ float sdata[];
  const unsigned tid = threadIdx.x;
  sdata[tid] = LoadOne<kC>(in, n, square);
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    const unsigned index = 2 * s * tid;
    if (index < blockDim.x) sdata[index] = CombineOp<kC>::Apply(sdata[index], sdata[index + s]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// The sequential-addressing tree over sdata[0, blockDim.x): contiguous threads, no conflicts.
template <CombineKind kC>
__device__ inline void SequentialTree(float* sdata, unsigned tid, unsigned stop) {
  for (unsigned s = blockDim.x / 2; s > stop; s >>= 1) {
    if (tid < s) sdata[tid] = CombineOp<kC>::Apply(sdata[tid], sdata[tid + s]);
    __syncthreads();
  }
}

// 004 reduce2: sequential addressing.
template <CombineKind kC>
__global__ void SequentialKernel(const float* in, size_t n, bool square, float* out) {
  extern __shared__ float sdata[];
  const unsigned tid = threadIdx.x;
  sdata[tid] = LoadOne<kC>(in, n, square);
  __syncthreads();
  SequentialTree<kC>(sdata, tid, 0);
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// 004 reduce3: sequential addressing after the first add during the load.
template <CombineKind kC>
__global__ void FirstAddLoadKernel(const float* in, size_t n, bool square, float* out) {
  extern __shared__ float sdata[];
  const unsigned tid = threadIdx.x;
  sdata[tid] = LoadTwo<kC>(in, n, square);
  __syncthreads();
  SequentialTree<kC>(sdata, tid, 0);
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

}  // namespace gpureduce::kernels::cuda
