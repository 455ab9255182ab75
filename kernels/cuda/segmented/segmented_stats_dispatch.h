#pragma once

// The per-dtype launches behind segmented_stats.h, each instantiated in its dtype group's
// translation unit (segmented_stats_<group>.cu) so they build in parallel.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "common/reduction/dtype.h"
#include "kernels/cuda/stats/stats_launch.h"

namespace gpureduce::kernels::cuda {

// `flags`: one of the two SegmentedStatsFlags instantiations.
template <DType kDTypeT>
cudaError_t LaunchSegmentStatsFor(cudaStream_t stream, unsigned flags, const std::byte* d_in,
                                  const uint64_t* d_bounds, uint64_t segments, bool per_block,
                                  DeviceStats* d_out);

// Chunk k's Stats of column c (rows k * rows_per_chunk.. of it) to d_out[k * columns + c].
template <DType kDTypeT>
cudaError_t LaunchColumnChunkStatsFor(cudaStream_t stream, unsigned flags, const std::byte* d_in,
                                      uint64_t rows, uint64_t columns, uint64_t base_row,
                                      uint64_t rows_per_chunk, uint32_t chunks, DeviceStats* d_out);

}  // namespace gpureduce::kernels::cuda
