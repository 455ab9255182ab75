#pragma once

// Host API of `single_pass`, the production kernel: every op in one launch, float64 accumulation
// for SUM, MEAN, SUM_SQUARES and PROD, any input alignment, deterministic.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "common/reduction/op.h"
#include "common/reduction/partial.h"
#include "kernels/cuda/single_pass/single_pass_policy.h"
#include "kernels/gpu_traits.h"
#include "kernels/scratch_layout.h"

namespace gpureduce::kernels::cuda {

struct SinglePassLaunch {
  GpuTraits gpu;              // the grid is sized to it, the policy chosen by it
  SinglePassScratch scratch;  // its counter zeroed once before the first launch
  cudaStream_t stream;
  uint32_t max_blocks = 0;  // overrides the policy's cap on blocks (the bench's --max-blocks)
};

// Reduces d_in[0, n) (n >= 1; elements base_index.. of the whole array) and folds the result
// into *d_out (`accumulate`) or stores it there. d_out may be mapped pinned host memory.
cudaError_t SinglePassReduce(const SinglePassLaunch& launch, Op op, const float* d_in, size_t n,
                             uint64_t base_index, Partial* d_out, bool accumulate);

}  // namespace gpureduce::kernels::cuda
