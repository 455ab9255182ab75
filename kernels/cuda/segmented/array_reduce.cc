// kernels::cuda::ReduceSegmentsInto and ReduceColumnsInto (kernels/reduce.h): a request's
// StatsNeeds to the array kernels' flags, Stats to the DeviceStats they write (the same bytes:
// stats_reduce.cc asserts it).

#include "kernels/cuda/segmented/segmented_stats.h"
#include "kernels/cuda/stats/stats_policy.h"
#include "kernels/reduce.h"

namespace gpureduce::kernels::cuda {
namespace {

unsigned FlagsOf(const StatsNeeds& needs) {
  return CanonicalStatsFlags(needs.sum, needs.sum_squares, needs.prod, needs.min, needs.max,
                             needs.moments);
}

DeviceStats* AsDevice(Stats* stats) { return reinterpret_cast<DeviceStats*>(stats); }

}  // namespace

cudaError_t ReduceSegmentsInto(cudaStream_t stream, DType dtype, const StatsNeeds& needs,
                               const std::byte* d_in, const uint64_t* d_bounds, uint64_t segments,
                               uint64_t elements, Stats* d_out) {
  return LaunchSegmentStats(stream, dtype, FlagsOf(needs), d_in, d_bounds, segments, elements,
                            AsDevice(d_out));
}

uint32_t ColumnChunksFor(uint64_t rows, uint64_t columns, const GpuTraits& gpu,
                         uint64_t max_partials) {
  return ColumnStatsChunks(rows, columns, gpu.multiprocessors, max_partials);
}

cudaError_t ReduceColumnsInto(cudaStream_t stream, DType dtype, const StatsNeeds& needs,
                              const std::byte* d_in, uint64_t rows, uint64_t columns,
                              uint64_t base_row, uint32_t chunks, Stats* d_partials, Stats* d_out) {
  return LaunchColumnStats(stream, dtype, FlagsOf(needs), d_in, rows, columns, base_row, chunks,
                           AsDevice(d_partials), AsDevice(d_out));
}

}  // namespace gpureduce::kernels::cuda
