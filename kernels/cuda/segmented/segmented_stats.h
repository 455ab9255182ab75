#pragma once

// Issue 23's GPU kernels for every dtype and op: the Stats (stats_launch.h's DeviceStats) of each
// segment of an array, and of each column of a row-major table, from the stats kernel's
// per-thread accumulations (stats_state.cuh) and merges, so an output's answer reads as the
// whole array's would. The service's array requests run on them (runtime/cuda/
// cuda_block_kernels.h); float32 SUM at the bandwidth goals has its own kernels
// (segmented_sum.h). Deterministic: the same input gives the same bits.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "common/reduction/dtype.h"
#include "kernels/cuda/stats/stats_launch.h"

namespace gpureduce::kernels::cuda {

// The two instantiations the array kernels have per dtype (compile time): everything but the
// product, and everything. `flags` (stats_policy.h) picks the leaner one that covers it.
unsigned SegmentedStatsFlags(unsigned flags);

// d_out[s] = the Stats of elements [d_bounds[s], d_bounds[s + 1]) of d_in (segments + 1
// ascending bounds from 0), indices counted from the segment's start; an empty segment's count
// is 0; `elements` is the last bound. A warp per segment where they are short (mean under
// kSegmentStatsBlockLength elements), a block of 256 threads per segment otherwise.
cudaError_t LaunchSegmentStats(cudaStream_t stream, DType dtype, unsigned flags,
                               const std::byte* d_in, const uint64_t* d_bounds, uint64_t segments,
                               uint64_t elements, DeviceStats* d_out);

inline constexpr uint64_t kSegmentStatsBlockLength = 1024;

// How many row chunks LaunchColumnStats splits `rows` into for `columns` columns so that the GPU
// has threads enough, with at most `max_partials` partial Stats (1: no partials needed).
uint32_t ColumnStatsChunks(uint64_t rows, uint64_t columns, int multiprocessors,
                           uint64_t max_partials);

// d_out[c] = the Stats of column c of the row-major (rows, columns) table at d_in, element r's
// index being base_row + r. A thread per column per chunk of rows; with chunks > 1 the chunks'
// Stats go to d_partials (chunks * columns) and a second launch merges them in order.
cudaError_t LaunchColumnStats(cudaStream_t stream, DType dtype, unsigned flags,
                              const std::byte* d_in, uint64_t rows, uint64_t columns,
                              uint64_t base_row, uint32_t chunks, DeviceStats* d_partials,
                              DeviceStats* d_out);

}  // namespace gpureduce::kernels::cuda
