#pragma once

// Steps 1-2 of the ladder (seed 003 #1-#2): atomics do all the combining.

#include "kernels/cuda/ladder/combine.cuh"

namespace gpureduce::kernels::cuda {

// 003 #1: one atomic per element into the single global result.
template <CombineKind kC>
__global__ void AtomicGlobalKernel(const float* in, size_t n, bool square, float* result) {
  const size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) AtomicCombine<kC>(result, Load(in, i, square));
}

// 003 #2: atomics into one shared value per block, then one global atomic per block.
template <CombineKind kC>
__global__ void AtomicSharedKernel(const float* in, size_t n, bool square, float* result) {
  __shared__ float block_value;
  if (threadIdx.x == 0) block_value = CombineOp<kC>::Identity();
  __syncthreads();
  const size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) AtomicCombine<kC>(&block_value, Load(in, i, square));
  __syncthreads();
  if (threadIdx.x == 0) AtomicCombine<kC>(result, block_value);
}

}  // namespace gpureduce::kernels::cuda
