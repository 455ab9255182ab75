#pragma once

// The kernels behind segmented_stats.h. Each thread keeps a ThreadStats over its elements in
// increasing index (what its strict extreme comparisons need), as the stats kernel's threads do;
// a segment's threads merge through WarpMerge or BlockMerge, a column's chunks through
// MergeDeviceStats in chunk order.

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/segmented/segmented_stats_dispatch.h"
#include "kernels/cuda/single_pass/block_merge.cuh"
#include "kernels/cuda/stats/stats_merge.cuh"
#include "kernels/cuda/stats/stats_policy.h"
#include "kernels/cuda/stats/stats_state.cuh"

namespace gpureduce::kernels::cuda {

inline constexpr unsigned kSegmentStatsThreads = 256;
inline constexpr unsigned kSegmentStatsFlagsNoProd =
    kStatsSum | kStatsSumSquares | kStatsMoments | kStatsExtremes;

// Segment s's elements from lane `lane` of `threads` on, one at a time (segments start anywhere,
// so no vector loads); indices from the segment's start.
template <DType kDTypeT, unsigned kFlagsT>
__device__ __forceinline__ ThreadStats<kDTypeT, kFlagsT> ReadSegment(
    const typename StatsDType<kDTypeT>::Storage* __restrict__ d_in, uint64_t lo, uint64_t hi,
    unsigned lane, unsigned threads) {
  ThreadStats<kDTypeT, kFlagsT> state;
  for (uint64_t i = lo + lane; i < hi; i += threads) {
    state.AddScalar(StatsDType<kDTypeT>::Load(d_in + i), static_cast<int64_t>(i - lo));
  }
  return state;
}

// A warp per segment.
template <DType kDTypeT, unsigned kFlagsT>
__global__ void __launch_bounds__(kSegmentStatsThreads)
    SegmentWarpStatsKernel(const typename StatsDType<kDTypeT>::Storage* __restrict__ d_in,
                           const uint64_t* __restrict__ d_bounds, uint64_t segments,
                           DeviceStats* __restrict__ d_out) {
  constexpr unsigned kWarps = kSegmentStatsThreads / 32;
  const unsigned lane = threadIdx.x % 32;
  for (uint64_t s = uint64_t{blockIdx.x} * kWarps + threadIdx.x / 32; s < segments;
       s += uint64_t{gridDim.x} * kWarps) {  // uniform per warp: its shuffles run converged
    const uint64_t lo = d_bounds[s], hi = d_bounds[s + 1];
    const auto state = ReadSegment<kDTypeT, kFlagsT>(d_in, lo, hi, lane, 32).ToBlock();
    // The read loop's trip count differs between lanes: reconverged here, the merge's shuffles
    // run converged (stats_kernel.cuh measured 12 us a launch without it).
    __syncwarp();
    const auto block = WarpMerge(state);
    if (lane == 0) d_out[s] = ToDeviceStats(block, hi - lo, 0);
  }
}

// A block per segment.
template <DType kDTypeT, unsigned kFlagsT>
__global__ void __launch_bounds__(kSegmentStatsThreads)
    SegmentBlockStatsKernel(const typename StatsDType<kDTypeT>::Storage* __restrict__ d_in,
                            const uint64_t* __restrict__ d_bounds, uint64_t segments,
                            DeviceStats* __restrict__ d_out) {
  using Block = BlockStats<kDTypeT, kFlagsT>;
  for (uint64_t s = blockIdx.x; s < segments; s += gridDim.x) {
    const uint64_t lo = d_bounds[s], hi = d_bounds[s + 1];
    const Block state =
        ReadSegment<kDTypeT, kFlagsT>(d_in, lo, hi, threadIdx.x, kSegmentStatsThreads).ToBlock();
    __syncwarp();  // as above
    const Block block = BlockMerge<Block, kSegmentStatsThreads>(state);
    if (threadIdx.x == 0) d_out[s] = ToDeviceStats(block, hi - lo, 0);
  }
}

// A thread per column of a chunk of rows: neighbouring threads read neighbouring elements.
template <DType kDTypeT, unsigned kFlagsT>
__global__ void __launch_bounds__(kSegmentStatsThreads)
    ColumnChunkStatsKernel(const typename StatsDType<kDTypeT>::Storage* __restrict__ d_in,
                           uint64_t rows, uint64_t columns, uint64_t base_row,
                           uint64_t rows_per_chunk, DeviceStats* __restrict__ d_out) {
  const uint64_t column = uint64_t{blockIdx.x} * kSegmentStatsThreads + threadIdx.x;
  if (column >= columns) return;
  const uint64_t first = uint64_t{blockIdx.y} * rows_per_chunk;
  // (The launch makes no empty chunk; one would report no elements.)
  const uint64_t last =
      first >= rows ? first : (first + rows_per_chunk < rows ? first + rows_per_chunk : rows);
  ThreadStats<kDTypeT, kFlagsT> state;
  for (uint64_t r = first; r < last; ++r) {
    state.AddScalar(StatsDType<kDTypeT>::Load(d_in + r * columns + column),
                    static_cast<int64_t>(r));
  }
  d_out[blockIdx.y * columns + column] = ToDeviceStats(state.ToBlock(), last - first, base_row);
}

template <DType kDTypeT, unsigned kFlagsT>
cudaError_t LaunchSegments(cudaStream_t stream, const std::byte* d_in, const uint64_t* d_bounds,
                           uint64_t segments, bool per_block, DeviceStats* d_out) {
  using Storage = typename StatsDType<kDTypeT>::Storage;
  constexpr uint64_t kMaxGrid = 65535;
  const auto* in = reinterpret_cast<const Storage*>(d_in);
  const uint64_t per_launch_block = per_block ? 1 : kSegmentStatsThreads / 32;
  const auto grid = static_cast<unsigned>(
      std::min<uint64_t>(kMaxGrid, (segments + per_launch_block - 1) / per_launch_block));
  if (grid == 0) return cudaSuccess;
  if (per_block) {
    SegmentBlockStatsKernel<kDTypeT, kFlagsT>
        <<<grid, kSegmentStatsThreads, 0, stream>>>(in, d_bounds, segments, d_out);
  } else {
    SegmentWarpStatsKernel<kDTypeT, kFlagsT>
        <<<grid, kSegmentStatsThreads, 0, stream>>>(in, d_bounds, segments, d_out);
  }
  return cudaGetLastError();
}

template <DType kDTypeT>
cudaError_t LaunchSegmentStatsFor(cudaStream_t stream, unsigned flags, const std::byte* d_in,
                                  const uint64_t* d_bounds, uint64_t segments, bool per_block,
                                  DeviceStats* d_out) {
  if (flags == kStatsAll) {
    return LaunchSegments<kDTypeT, kStatsAll>(stream, d_in, d_bounds, segments, per_block, d_out);
  }
  if (flags == kSegmentStatsFlagsNoProd) {
    return LaunchSegments<kDTypeT, kSegmentStatsFlagsNoProd>(stream, d_in, d_bounds, segments,
                                                             per_block, d_out);
  }
  return cudaErrorInvalidValue;
}

template <DType kDTypeT, unsigned kFlagsT>
cudaError_t LaunchColumns(cudaStream_t stream, const std::byte* d_in, uint64_t rows,
                          uint64_t columns, uint64_t base_row, uint64_t rows_per_chunk,
                          uint32_t chunks, DeviceStats* d_out) {
  using Storage = typename StatsDType<kDTypeT>::Storage;
  const dim3 grid(
      static_cast<unsigned>((columns + kSegmentStatsThreads - 1) / kSegmentStatsThreads), chunks);
  if (grid.x == 0 || chunks == 0) return cudaSuccess;
  ColumnChunkStatsKernel<kDTypeT, kFlagsT><<<grid, kSegmentStatsThreads, 0, stream>>>(
      reinterpret_cast<const Storage*>(d_in), rows, columns, base_row, rows_per_chunk, d_out);
  return cudaGetLastError();
}

template <DType kDTypeT>
cudaError_t LaunchColumnChunkStatsFor(cudaStream_t stream, unsigned flags, const std::byte* d_in,
                                      uint64_t rows, uint64_t columns, uint64_t base_row,
                                      uint64_t rows_per_chunk, uint32_t chunks,
                                      DeviceStats* d_out) {
  if (flags == kStatsAll) {
    return LaunchColumns<kDTypeT, kStatsAll>(stream, d_in, rows, columns, base_row, rows_per_chunk,
                                             chunks, d_out);
  }
  if (flags == kSegmentStatsFlagsNoProd) {
    return LaunchColumns<kDTypeT, kSegmentStatsFlagsNoProd>(stream, d_in, rows, columns, base_row,
                                                            rows_per_chunk, chunks, d_out);
  }
  return cudaErrorInvalidValue;
}

#define GPUREDUCE_INSTANTIATE_SEGMENTED_STATS(D)                                                \
  template cudaError_t LaunchSegmentStatsFor<D>(cudaStream_t, unsigned, const std::byte*,       \
                                                const uint64_t*, uint64_t, bool, DeviceStats*); \
  template cudaError_t LaunchColumnChunkStatsFor<D>(cudaStream_t, unsigned, const std::byte*,   \
                                                    uint64_t, uint64_t, uint64_t, uint64_t,     \
                                                    uint32_t, DeviceStats*)

}  // namespace gpureduce::kernels::cuda
