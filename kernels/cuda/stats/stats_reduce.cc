// kernels::cuda::ReduceStatsInto (kernels/reduce.h): a request's StatsNeeds to the leanest
// instantiation of the stats kernel, Stats to the DeviceStats the CUDA sources write.

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/stats/stats_launch.h"
#include "kernels/cuda/stats/stats_policy.h"
#include "kernels/reduce.h"

namespace gpureduce::kernels::cuda {
namespace {

// DeviceStats is Stats, byte for byte: the kernel writes the caller's Stats through it.
#define GPUREDUCE_SAME_FIELD(field)                                       \
  static_assert(offsetof(Stats, field) == offsetof(DeviceStats, field) && \
                sizeof(Stats::field) == sizeof(DeviceStats::field))
GPUREDUCE_SAME_FIELD(count);
GPUREDUCE_SAME_FIELD(nan_count);
GPUREDUCE_SAME_FIELD(first_nan);
GPUREDUCE_SAME_FIELD(integer);
GPUREDUCE_SAME_FIELD(sum);
GPUREDUCE_SAME_FIELD(sum_lo);
GPUREDUCE_SAME_FIELD(int_sum);
GPUREDUCE_SAME_FIELD(int_sum_wraps);
GPUREDUCE_SAME_FIELD(sum_squares);
GPUREDUCE_SAME_FIELD(prod);
GPUREDUCE_SAME_FIELD(prod_exponent);
GPUREDUCE_SAME_FIELD(int_prod);
GPUREDUCE_SAME_FIELD(int_prod_overflow);
GPUREDUCE_SAME_FIELD(int_prod_zero);
GPUREDUCE_SAME_FIELD(int_prod_two_to_63);
GPUREDUCE_SAME_FIELD(min);
GPUREDUCE_SAME_FIELD(max);
GPUREDUCE_SAME_FIELD(int_min);
GPUREDUCE_SAME_FIELD(int_max);
GPUREDUCE_SAME_FIELD(min_index);
GPUREDUCE_SAME_FIELD(max_index);
GPUREDUCE_SAME_FIELD(mean);
GPUREDUCE_SAME_FIELD(m2);
#undef GPUREDUCE_SAME_FIELD
static_assert(sizeof(Stats) == sizeof(DeviceStats) && alignof(Stats) == alignof(DeviceStats));

}  // namespace

cudaError_t LaunchStats(const StatsLaunch& launch, DType dtype, unsigned flags,
                        const std::byte* d_in, size_t n, uint64_t base_index,
                        DeviceStats* d_running, bool first) {
  if (reinterpret_cast<uintptr_t>(d_in) % DTypeSize(dtype) != 0) return cudaErrorInvalidValue;
  switch (dtype) {
    case DType::kFloat32:
      return LaunchStatsFloat32(launch, flags, d_in, n, base_index, d_running, first);
    case DType::kFloat16:
      return LaunchStatsFloat16(launch, flags, d_in, n, base_index, d_running, first);
    case DType::kBFloat16:
      return LaunchStatsBFloat16(launch, flags, d_in, n, base_index, d_running, first);
    case DType::kFloat64:
      return LaunchStatsFloat64(launch, flags, d_in, n, base_index, d_running, first);
    case DType::kInt32:
      return LaunchStatsInt32(launch, flags, d_in, n, base_index, d_running, first);
    case DType::kInt64:
      return LaunchStatsInt64(launch, flags, d_in, n, base_index, d_running, first);
  }
  return cudaErrorInvalidValue;
}

cudaError_t ReduceStatsInto(const ChunkLaunch& launch, DType dtype, const StatsNeeds& needs,
                            const std::byte* d_in, size_t n, uint64_t base_index,
                            Stats* d_running) {
  const unsigned flags = CanonicalStatsFlags(needs.sum, needs.sum_squares, needs.prod, needs.min,
                                             needs.max, needs.moments);
  const StatsLaunch stats{launch.gpu, launch.scratch.stats, launch.stream};
  return LaunchStats(stats, dtype, flags, d_in, n, base_index,
                     reinterpret_cast<DeviceStats*>(d_running), launch.first);
}

}  // namespace gpureduce::kernels::cuda
