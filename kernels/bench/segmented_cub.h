#pragma once

// CUB's peers of the segmented suite: DeviceSegmentedReduce::Sum over the same offsets, and
// DeviceReduce::Sum over one segment (a launch per segment: the fairer peer for a few long ones).
// float32 in and out, as CUB sums floats (in float).

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gpureduce::bench {

// Temp storage for `segments` segments over `n` elements (the larger of the two calls').
cudaError_t CubSegmentedBytes(size_t n, uint64_t segments, const uint64_t* d_offsets,
                              size_t* bytes);

cudaError_t CubSegmentedSum(const float* d_in, uint64_t segments, const uint64_t* d_offsets,
                            float* d_out, void* d_temp, size_t temp_bytes, cudaStream_t stream);

// DeviceReduce::Sum of d_in[begin, end) into *d_out.
cudaError_t CubRangeSum(const float* d_in, uint64_t begin, uint64_t end, float* d_out, void* d_temp,
                        size_t temp_bytes, cudaStream_t stream);

}  // namespace gpureduce::bench
