#pragma once

// Host API of `single_pass`, the production kernel: every op in one launch, float64 accumulation
// for SUM, MEAN, SUM_SQUARES and PROD, any input alignment, deterministic.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/single_pass/single_pass_policy.h"
#include "kernels/gpu_traits.h"
#include "kernels/op.h"
#include "kernels/partial.h"

namespace gpureduce::kernels::cuda {

struct SinglePassLaunch {
  GpuTraits gpu;    // the grid is sized to it, the policy chosen by it
  void* d_scratch;  // kSinglePassScratchBytes, zeroed once before the first launch
  cudaStream_t stream;
  uint32_t max_blocks = 0;  // overrides the policy's cap on blocks (the bench's --max-blocks)
};

// Reduces d_in[0, n) (n >= 1; elements base_index.. of the whole array) and folds the result
// into *d_out (`accumulate`) or stores it there. d_out may be mapped pinned host memory.
cudaError_t SinglePassReduce(const SinglePassLaunch& launch, Op op, const float* d_in, size_t n,
                             uint64_t base_index, Partial* d_out, bool accumulate);

// The same kernel summing in float32: only the benchmark uses it, as the bandwidth the float64
// accumulation is measured against.
cudaError_t SinglePassSumFloat32(const SinglePassLaunch& launch, const float* d_in, size_t n,
                                 Partial* d_out);

// SUM with tile shapes the policy did not choose (threads x vectors per thread): only the
// benchmark uses them, to show what the choice is worth.
enum class SinglePassShape { k256x8, k512x4 };
cudaError_t SinglePassSumShape(const SinglePassLaunch& launch, SinglePassShape shape,
                               const float* d_in, size_t n, Partial* d_out);

}  // namespace gpureduce::kernels::cuda
