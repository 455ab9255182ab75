#include "kernels/bench/segmented_cub.h"

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>

namespace gpureduce::bench {

cudaError_t CubSegmentedBytes(size_t n, uint64_t segments, const uint64_t* d_offsets,
                              size_t* bytes) {
  size_t segmented = 0, whole = 0;
  cudaError_t error = cub::DeviceSegmentedReduce::Sum(
      nullptr, segmented, static_cast<const float*>(nullptr), static_cast<float*>(nullptr),
      static_cast<int64_t>(segments), d_offsets, d_offsets + 1);
  if (error != cudaSuccess) return error;
  error = cub::DeviceReduce::Sum(nullptr, whole, static_cast<const float*>(nullptr),
                                 static_cast<float*>(nullptr), static_cast<int64_t>(n));
  *bytes = segmented > whole ? segmented : whole;
  return error;
}

cudaError_t CubSegmentedSum(const float* d_in, uint64_t segments, const uint64_t* d_offsets,
                            float* d_out, void* d_temp, size_t temp_bytes, cudaStream_t stream) {
  return cub::DeviceSegmentedReduce::Sum(d_temp, temp_bytes, d_in, d_out,
                                         static_cast<int64_t>(segments), d_offsets, d_offsets + 1,
                                         stream);
}

cudaError_t CubRangeSum(const float* d_in, uint64_t begin, uint64_t end, float* d_out, void* d_temp,
                        size_t temp_bytes, cudaStream_t stream) {
  return cub::DeviceReduce::Sum(d_temp, temp_bytes, d_in + begin, d_out,
                                static_cast<int64_t>(end - begin), stream);
}

}  // namespace gpureduce::bench
