#pragma once

#include <cuda_runtime_api.h>

namespace gpureduce::testing {

// Sums 64 floats with the seeds' unsynchronized volatile last warp (one block of 64 threads).
cudaError_t LaunchNaiveLastWarpSum(const float* d_in64, float* d_out);

}  // namespace gpureduce::testing
