#pragma once

// Issue 23's GPU kernels, first rung: float32 SUM of every segment of an array (NumPy's
// x.sum(axis=-1) of rows, or reduce_many's arrays) and of every column of a row-major table
// (x.sum(axis=0)), accumulated in float64 and rounded once to float32 per output, as the
// service's contract asks. One policy (segmented_policy.h) picks the layout's kernel by the
// segments' mean length: groups of lanes per segment for short ones, a warp per segment with
// float4 loads for medium ones, fixed ranges of the array per block (pieces of a segment cut by
// a range joined by a second launch, in order) for long ones. Deterministic: same input, same
// bits.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/gpu_traits.h"

namespace gpureduce::kernels::cuda {

// Segment s is elements [d_offsets[s], d_offsets[s + 1]) (count + 1 ascending offsets from 0 to
// the element count), or, with d_offsets null, [s * length, (s + 1) * length).
struct Segments {
  uint64_t count = 0;
  const uint64_t* d_offsets = nullptr;
  uint64_t length = 0;
};

// The device scratch SegmentedSum and StridedSum need for an array of `n` elements (and, for
// StridedSum, `cols` columns).
size_t SegmentedSumScratchBytes(const GpuTraits& gpu, uint64_t n);
size_t StridedSumScratchBytes(const GpuTraits& gpu, uint64_t rows, uint64_t cols);

// d_out[s] = the float32 rounding of the float64 sum of segment s of d_in[0, n) (0 where it is
// empty), asynchronously on `stream`. d_in aligned to 4 bytes; d_scratch as sized above.
cudaError_t SegmentedSum(const GpuTraits& gpu, const float* d_in, uint64_t n,
                         const Segments& segments, float* d_out, void* d_scratch,
                         size_t scratch_bytes, cudaStream_t stream);

// d_out[c] = the float32 rounding of the float64 sum of column c of a row-major (rows, cols)
// table at d_in.
cudaError_t StridedSum(const GpuTraits& gpu, const float* d_in, uint64_t rows, uint64_t cols,
                       float* d_out, void* d_scratch, size_t scratch_bytes, cudaStream_t stream);

}  // namespace gpureduce::kernels::cuda
