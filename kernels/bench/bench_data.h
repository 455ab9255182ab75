#pragma once

// Benchmark inputs made on the device from (seed, index): k * 2^-23 with |k| < 2^23, uniform in
// [-1, 1). Such values sum exactly in float64 up to 2^30 of them, so the host knows every
// input's exact sum without copying gigabytes back.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gpureduce::bench {

cudaError_t FillDevice(float* d_out, size_t n, uint64_t seed, cudaStream_t stream);

// The same values on the host: the exact sum, the minimum and the maximum.
struct HostSummary {
  double sum = 0;
  double abs_sum = 0;
  float min = 0;
  float max = 0;
};
HostSummary Summarize(size_t n, uint64_t seed);

// CUB DeviceReduce::Sum / Min / Max on float32, the reference every run is compared with.
enum class CubOp { kSum, kMin, kMax };
cudaError_t CubTempBytes(size_t n, size_t* bytes);
// `d_temp` null: sets `temp_bytes` to what the call needs.
cudaError_t CubReduce(CubOp op, const float* d_in, size_t n, float* d_out, void* d_temp,
                      size_t& temp_bytes, cudaStream_t stream);

}  // namespace gpureduce::bench
