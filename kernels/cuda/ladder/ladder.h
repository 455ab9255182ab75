#pragma once

// Host API of the reduction ladder: run one variant over a chunk and fold its float32 result
// into the request's running Partial, in stream order.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "common/reduction/op.h"
#include "common/reduction/partial.h"
#include "kernels/cuda/ladder/ladder_policy.h"
#include "kernels/gpu_traits.h"
#include "kernels/scratch_layout.h"

namespace gpureduce::kernels::cuda {

// Reduces d_in[0, n) (n >= 1) with the variant of `policy` at `block_size` threads per block
// (0: the policy's default; else a power of two it allows) and folds the result into
// *d_running (or, with `store`, overwrites it). `gpu` sizes grid_stride's grid; `scratch`
// (CarveLadderScratch) must be laid out for n elements at least. Asynchronous on `stream`.
cudaError_t LadderReduceInto(const LadderPolicy& policy, Op op, const float* d_in, size_t n,
                             uint32_t block_size, const GpuTraits& gpu, Partial* d_running,
                             const LadderScratch& scratch, cudaStream_t stream, bool store = false);

}  // namespace gpureduce::kernels::cuda
