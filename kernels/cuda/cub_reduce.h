#pragma once

// The `cub` kernel: CUB's DeviceReduce with operators that keep gpureduce's contract (float64
// accumulation for sums and products, NaN propagation, first occurrence for ARGMIN/ARGMAX),
// folding each chunk's result into a running Partial on the device.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "common/reduction/op.h"
#include "common/reduction/partial.h"
#include "kernels/scratch_layout.h"

namespace gpureduce::kernels::cuda {

// The temp storage CUB needs to reduce chunks of up to `max_elements`, for any op.
cudaError_t CubTempBytes(size_t max_elements, size_t* bytes);

// Reduces d_in[0, n) (elements base_index .. base_index + n - 1 of the whole array) and folds
// the result into *d_running (or, with `store`, overwrites it), in stream order. n >= 1.
// Asynchronous on `stream`.
cudaError_t CubReduceInto(Op op, const float* d_in, size_t n, uint64_t base_index,
                          Partial* d_running, const CubScratch& scratch, cudaStream_t stream,
                          bool store = false);

}  // namespace gpureduce::kernels::cuda
