#include "kernels/bench/bench_data.h"

#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cmath>

namespace gpureduce::bench {
namespace {

__host__ __device__ inline float ValueAt(uint64_t seed, uint64_t index) {
  uint64_t z = seed + index * 0x9E3779B97F4A7C15ull;  // SplitMix64
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const int32_t k = static_cast<int32_t>(z >> 40) - (1 << 23);  // [-2^23, 2^23)
  return static_cast<float>(k) * (1.0f / 8388608.0f);
}

__global__ void Fill(float* out, size_t n, uint64_t seed) {
  for (size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    out[i] = ValueAt(seed, i);
  }
}

}  // namespace

cudaError_t FillDevice(float* d_out, size_t n, uint64_t seed, cudaStream_t stream) {
  Fill<<<1024, 256, 0, stream>>>(d_out, n, seed);
  return cudaGetLastError();
}

HostSummary Summarize(size_t n, uint64_t seed) {
  HostSummary summary;
  summary.min = summary.max = ValueAt(seed, 0);
  for (size_t i = 0; i < n; ++i) {
    const float x = ValueAt(seed, i);
    summary.sum += x;
    summary.abs_sum += std::fabs(x);
    summary.min = std::min(summary.min, x);
    summary.max = std::max(summary.max, x);
  }
  return summary;
}

cudaError_t CubReduce(CubOp op, const float* d_in, size_t n, float* d_out, void* d_temp,
                      size_t& temp_bytes, cudaStream_t stream) {
  switch (op) {
    case CubOp::kMin:
      return cub::DeviceReduce::Min(d_temp, temp_bytes, d_in, d_out, n, stream);
    case CubOp::kMax:
      return cub::DeviceReduce::Max(d_temp, temp_bytes, d_in, d_out, n, stream);
    default:
      return cub::DeviceReduce::Sum(d_temp, temp_bytes, d_in, d_out, n, stream);
  }
}

cudaError_t CubTempBytes(size_t n, size_t* bytes) {
  *bytes = 0;
  for (CubOp op : {CubOp::kSum, CubOp::kMin, CubOp::kMax}) {
    size_t op_bytes = 0;
    if (cudaError_t error = CubReduce(op, nullptr, n, nullptr, nullptr, op_bytes, 0);
        error != cudaSuccess) {
      return error;
    }
    *bytes = std::max(*bytes, op_bytes);
  }
  return cudaSuccess;
}

}  // namespace gpureduce::bench
