#pragma once

// Benchmark inputs made on the device from (seed, index): k * 2^-23 with |k| < 2^23, uniform in
// [-1, 1). Such values sum exactly in float64 up to 2^30 of them, so the host knows every
// input's exact sum, extremes and their first positions without copying gigabytes back.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "common/reduction/op.h"

namespace gpureduce::bench {

// d_out[p] = value (p mod stride) of `seed`, for p in [0, n): a ring of identical inputs.
cudaError_t FillDevice(float* d_out, size_t n, size_t stride, uint64_t seed, cudaStream_t stream);

// What the host knows of values [first, first + n) of `seed` (computed on all host cores).
struct HostSummary {
  double sum = 0;
  double abs_sum = 0;
  float min = 0;
  float max = 0;
  int64_t argmin = 0;  // first occurrence, relative to `first`
  int64_t argmax = 0;
};
HostSummary Summarize(size_t first, size_t n, uint64_t seed);

// CUB DeviceReduce on float32 with CUB's own operators (Sum, Min, Max, ArgMin, ArgMax): the
// reference every run is timed against. Any other op is cudaErrorInvalidValue.
inline constexpr gpureduce::Op kCubOps[] = {gpureduce::Op::kSum, gpureduce::Op::kMin,
                                            gpureduce::Op::kMax, gpureduce::Op::kArgMin,
                                            gpureduce::Op::kArgMax};
// Scratch for any of kCubOps over n elements, the results included.
cudaError_t CubScratchBytes(size_t n, size_t* bytes);
// Results land at the start of d_scratch: a float, then (ArgMin/ArgMax) an int64 index at +8.
cudaError_t CubReduce(gpureduce::Op op, const float* d_in, size_t n, void* d_scratch,
                      size_t scratch_bytes, cudaStream_t stream);
inline constexpr size_t kCubResultBytes = 256;

// A plain read of d_in[0, n) in 16 KiB tiles of float4 loads (n a multiple of 4, d_in 16-byte
// aligned), each block writing one float to d_sink[block]: the read ceiling the kernels are
// compared with.
cudaError_t ReadAll(const float* d_in, size_t n, int blocks, float* d_sink, cudaStream_t stream);

}  // namespace gpureduce::bench
