#pragma once

// Steps 7-10 of the ladder: the last warp without block barriers. The seeds' `volatile`
// warp-synchronous code assumed a warp runs in lockstep, which Volta's independent thread
// scheduling no longer guarantees; here every step is ordered by __syncwarp (or a shuffle).

#include "kernels/cuda/ladder/tree_kernels.cuh"

namespace gpureduce::kernels::cuda {

// The last 64 -> 1 steps in shared memory by the first warp (blockDim.x >= 64). Each step reads
// its operands, then __syncwarp, then writes, then __syncwarp: no lane reads a value another
// lane is writing in the same step.
template <CombineKind kC>
__device__ inline void WarpSyncTree(float* sdata, unsigned tid) {
  if (tid >= 32) return;
  for (unsigned offset = 32; offset > 0; offset >>= 1) {
    const float value = CombineOp<kC>::Apply(sdata[tid], sdata[tid + offset]);
    __syncwarp();
    sdata[tid] = value;
    __syncwarp();
  }
}

// 003 #7 / 002 kernel 6: the tree down to 64 values with barriers, the last warp unrolled.
template <CombineKind kC>
__global__ void UnrollLastWarpKernel(const float* in, size_t n, bool square, float* out) {
  extern __shared__ float sdata[];
  const unsigned tid = threadIdx.x;
  sdata[tid] = LoadTwo<kC>(in, n, square);
  __syncthreads();
  SequentialTree<kC>(sdata, tid, 32);
  WarpSyncTree<kC>(sdata, tid);
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// 004 reduce5: the whole tree unrolled at compile time for a block size of kBlockSize (>= 64).
template <CombineKind kC, unsigned kBlockSize>
__global__ void UnrollCompleteKernel(const float* in, size_t n, bool square, float* out) {
  extern __shared__ float sdata[];
  const unsigned tid = threadIdx.x;
  sdata[tid] = LoadTwo<kC>(in, n, square);
  __syncthreads();
#pragma unroll
  for (unsigned s = kBlockSize / 2; s > 32; s >>= 1) {
    if (tid < s) sdata[tid] = CombineOp<kC>::Apply(sdata[tid], sdata[tid + s]);
    __syncthreads();
  }
  WarpSyncTree<kC>(sdata, tid);
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// The first warp's 32 values (plus sdata[tid + 32] when the block has it) combined with
// shuffles; lane 0 ends with the block's value.
template <CombineKind kC>
__device__ inline float WarpShuffleTree(const float* sdata, unsigned tid) {
  float value = sdata[tid];
  if (blockDim.x >= 64) value = CombineOp<kC>::Apply(value, sdata[tid + 32]);
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    value = CombineOp<kC>::Apply(value, __shfl_down_sync(0xffffffffu, value, offset));
  }
  return value;
}

// 004 reduce4 / 002 kernel 7: barriers down to 64 values, then one warp of shuffles.
template <CombineKind kC>
__global__ void WarpShuffleKernel(const float* in, size_t n, bool square, float* out) {
  extern __shared__ float sdata[];
  const unsigned tid = threadIdx.x;
  sdata[tid] = LoadTwo<kC>(in, n, square);
  __syncthreads();
  SequentialTree<kC>(sdata, tid, 32);
  if (tid < 32) {
    const float value = WarpShuffleTree<kC>(sdata, tid);
    if (tid == 0) out[blockIdx.x] = value;
  }
}

// 004 reduce6 / 002 kernel 8: a grid sized to the device; each thread first combines many
// elements on a grid-stride loop (two per iteration), then the block reduces as warp_shuffle.
template <CombineKind kC>
__global__ void GridStrideKernel(const float* in, size_t n, bool square, float* out) {
  extern __shared__ float sdata[];
  const unsigned tid = threadIdx.x;
  const size_t stride = size_t{gridDim.x} * blockDim.x * 2;
  float value = CombineOp<kC>::Identity();
  for (size_t i = size_t{blockIdx.x} * blockDim.x * 2 + tid; i < n; i += stride) {
    value = CombineOp<kC>::Apply(value, Load(in, i, square));
    if (i + blockDim.x < n) value = CombineOp<kC>::Apply(value, Load(in, i + blockDim.x, square));
  }
  sdata[tid] = value;
  __syncthreads();
  SequentialTree<kC>(sdata, tid, 32);
  if (tid < 32) {
    const float block_value = WarpShuffleTree<kC>(sdata, tid);
    if (tid == 0) out[blockIdx.x] = block_value;
  }
}

}  // namespace gpureduce::kernels::cuda
