#pragma once

// The dtypes suite's inputs, made on the device from (seed, index) like bench_data.h's float32
// values, and what the host knows of them exactly: element i of every dtype is q_i * scale with
// q_i an integer from k = SplitMix64(seed, i) in [-2^23, 2^23): float32 and float64 k * 2^-23,
// float16 (k >> 12) * 2^-11, bfloat16 (k >> 15) * 2^-8 (each exact in its dtype), int32 k, int64
// k * 2^20. So the host's integer sums give every answer exactly without copying the data back.
// Also CUB's DeviceReduce::Sum and ::Min over each dtype, with CUB's own result types.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "common/reduction/dtype.h"

namespace gpureduce::bench {

// d_out[p] = element (p mod stride) of `dtype`, for p in [0, n): a ring of identical inputs.
cudaError_t FillTyped(DType dtype, void* d_out, size_t n, size_t stride, uint64_t seed,
                      cudaStream_t stream);

__extension__ using Int128 = __int128;

struct TypedSummary {
  double scale = 1;  // element = q * scale
  Int128 q_sum = 0, q_abs_sum = 0, q_square_sum = 0;
  int64_t q_min = 0, q_max = 0;
  int64_t argmin = -1, argmax = -1;  // first occurrences
};
// Of elements [0, n) of `dtype` (on all host cores).
TypedSummary SummarizeTyped(DType dtype, size_t n, uint64_t seed);

// CUB over `dtype` (Sum, or Min when `min`), its result at d_scratch[0] in the input's type.
cudaError_t CubTypedBytes(DType dtype, size_t n, size_t* bytes);
cudaError_t CubTyped(DType dtype, bool min, const void* d_in, size_t n, void* d_scratch,
                     size_t scratch_bytes, cudaStream_t stream);
// The result CUB left at h_result (copied from d_scratch), as a double.
double CubTypedValue(DType dtype, const void* h_result);
inline constexpr size_t kCubTypedResultBytes = 256;

}  // namespace gpureduce::bench
