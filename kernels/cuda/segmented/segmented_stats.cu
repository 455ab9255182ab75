// segmented_stats.h's dispatch by dtype, and the merge of a column's chunks.
#include "kernels/cuda/segmented/segmented_stats.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

#include "kernels/cuda/segmented/segmented_stats_dispatch.h"
#include "kernels/cuda/stats/stats_merge.cuh"
#include "kernels/cuda/stats/stats_policy.h"

namespace gpureduce::kernels::cuda {
namespace {

constexpr unsigned kMergeThreads = 256;
// Threads the column kernel aims for: a few waves of every SM's resident threads.
constexpr uint64_t kColumnThreadsPerSm = 4096;

__global__ void __launch_bounds__(kMergeThreads)
    MergeColumnChunksKernel(const DeviceStats* __restrict__ d_partials, uint32_t chunks,
                            uint64_t columns, DeviceStats* __restrict__ d_out) {
  const uint64_t column = uint64_t{blockIdx.x} * kMergeThreads + threadIdx.x;
  if (column >= columns) return;
  DeviceStats merged = d_partials[column];
  for (uint32_t k = 1; k < chunks; ++k) {
    merged = MergeDeviceStats(merged, d_partials[k * columns + column]);
  }
  d_out[column] = merged;
}

// f(std::integral_constant<DType, dtype>{}): one instantiation per dtype.
template <typename FunctionT>
cudaError_t ForDType(DType dtype, FunctionT&& f) {
  switch (dtype) {
#define GPUREDUCE_CASE(D) \
  case D:                 \
    return f(std::integral_constant<DType, D>{});
    GPUREDUCE_CASE(DType::kFloat32)
    GPUREDUCE_CASE(DType::kFloat16)
    GPUREDUCE_CASE(DType::kBFloat16)
    GPUREDUCE_CASE(DType::kFloat64)
    GPUREDUCE_CASE(DType::kInt32)
    GPUREDUCE_CASE(DType::kInt64)
#undef GPUREDUCE_CASE
  }
  return cudaErrorInvalidValue;
}

}  // namespace

unsigned SegmentedStatsFlags(unsigned flags) {
  return (flags & kStatsProd) != 0
             ? kStatsAll
             : (kStatsSum | kStatsSumSquares | kStatsMoments | kStatsExtremes);
}

cudaError_t LaunchSegmentStats(cudaStream_t stream, DType dtype, unsigned flags,
                               const std::byte* d_in, const uint64_t* d_bounds, uint64_t segments,
                               uint64_t elements, DeviceStats* d_out) {
  if (segments == 0) return cudaSuccess;
  const unsigned instance = SegmentedStatsFlags(flags);
  const bool per_block = elements / segments >= kSegmentStatsBlockLength;
  return ForDType(dtype, [&](auto d) {
    return LaunchSegmentStatsFor<decltype(d)::value>(stream, instance, d_in, d_bounds, segments,
                                                     per_block, d_out);
  });
}

uint32_t ColumnStatsChunks(uint64_t rows, uint64_t columns, int multiprocessors,
                           uint64_t max_partials) {
  if (rows <= 1 || columns == 0) return 1;
  const uint64_t wanted =
      std::max<uint64_t>(1, kColumnThreadsPerSm * std::max(1, multiprocessors) / columns);
  const uint64_t fit = std::max<uint64_t>(1, max_partials / columns);
  const uint64_t chunks = std::min({wanted, fit, rows, uint64_t{65535}});
  // Every chunk holds a row: the same rows per chunk, the last one shorter.
  const uint64_t rows_per_chunk = (rows + chunks - 1) / chunks;
  return static_cast<uint32_t>((rows + rows_per_chunk - 1) / rows_per_chunk);
}

cudaError_t LaunchColumnStats(cudaStream_t stream, DType dtype, unsigned flags,
                              const std::byte* d_in, uint64_t rows, uint64_t columns,
                              uint64_t base_row, uint32_t chunks, DeviceStats* d_partials,
                              DeviceStats* d_out) {
  if (columns == 0) return cudaSuccess;
  chunks = static_cast<uint32_t>(std::clamp<uint64_t>(chunks, 1, std::max<uint64_t>(rows, 1)));
  const uint64_t rows_per_chunk = std::max<uint64_t>(1, (rows + chunks - 1) / chunks);
  // Only the chunks that hold rows (5 rows in 4 chunks: 2, 2, 1).
  chunks =
      static_cast<uint32_t>(std::max<uint64_t>(1, (rows + rows_per_chunk - 1) / rows_per_chunk));
  DeviceStats* chunk_out = chunks > 1 ? d_partials : d_out;
  const unsigned instance = SegmentedStatsFlags(flags);
  const cudaError_t launched = ForDType(dtype, [&](auto d) {
    return LaunchColumnChunkStatsFor<decltype(d)::value>(
        stream, instance, d_in, rows, columns, base_row, rows_per_chunk, chunks, chunk_out);
  });
  if (launched != cudaSuccess || chunks == 1) return launched;
  const auto grid = static_cast<unsigned>((columns + kMergeThreads - 1) / kMergeThreads);
  MergeColumnChunksKernel<<<grid, kMergeThreads, 0, stream>>>(d_partials, chunks, columns, d_out);
  return cudaGetLastError();
}

}  // namespace gpureduce::kernels::cuda
