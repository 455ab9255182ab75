#pragma once

// Variants of `single_pass` that only the benchmark measures, to show what the production
// kernel's choices are worth. Built into gpureduce-bench alone, not the kernels library.

#include <cuda_runtime_api.h>

#include <cstddef>

#include "common/reduction/partial.h"
#include "kernels/cuda/single_pass/single_pass.h"

namespace gpureduce::bench {

// The same kernel summing in float32: the bandwidth the float64 accumulation is measured
// against.
cudaError_t SinglePassSumFloat32(const kernels::cuda::SinglePassLaunch& launch, const float* d_in,
                                 size_t n, gpureduce::Partial* d_out);

// SUM with tile shapes the policy did not choose (threads x vectors per thread).
enum class SinglePassShape { k256x8, k512x4 };
cudaError_t SinglePassSumShape(const kernels::cuda::SinglePassLaunch& launch, SinglePassShape shape,
                               const float* d_in, size_t n, gpureduce::Partial* d_out);

}  // namespace gpureduce::bench
