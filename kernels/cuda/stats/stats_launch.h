#pragma once

// The stats kernel's host entry points per dtype, below kernels/reduce.h's ReduceStatsInto (which
// maps StatsNeeds to flags and Stats to DeviceStats). Plain C++17 with CUDA's runtime API: the
// CUDA sources compile as C++17 and cannot include common/reduction/stats.h (std::span), so they
// write DeviceStats, whose layout stats_reduce.cc asserts is Stats's, field by field.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "common/reduction/dtype.h"
#include "kernels/gpu_traits.h"
#include "kernels/scratch_layout.h"

namespace gpureduce::kernels::cuda {

// common/reduction/stats.h's Stats, field for field (see there for what each means).
struct DeviceStats {
  uint64_t count = 0;
  uint64_t nan_count = 0;
  int64_t first_nan = -1;
  bool integer = false;
  double sum = 0.0;
  double sum_lo = 0.0;
  int64_t int_sum = 0;
  int64_t int_sum_wraps = 0;
  double sum_squares = 0.0;
  double prod = 1.0;
  int64_t prod_exponent = 0;
  uint64_t int_prod = 1;
  bool int_prod_overflow = false;
  bool int_prod_zero = false;
  bool int_prod_two_to_63 = false;
  double min = 0.0;
  double max = 0.0;
  int64_t int_min = 0;
  int64_t int_max = 0;
  int64_t min_index = -1;
  int64_t max_index = -1;
  double mean = 0.0;
  double m2 = 0.0;
};

struct StatsLaunch {
  GpuTraits gpu;         // the grid is sized to it
  StatsScratch scratch;  // its counter zeroed once before the first launch
  cudaStream_t stream;
  uint32_t max_blocks = 0;  // 0: the resident blocks (the bench may override)
};

// Reduces the n elements of `dtype` at d_in (aligned to the dtype's size; elements base_index..
// of the whole array) with the instantiation `flags` (one of kStatsInstantiations) and stores the
// chunk's stats in *d_running (`first`) or merges them into it (MergeStats's rules).
cudaError_t LaunchStats(const StatsLaunch& launch, DType dtype, unsigned flags,
                        const std::byte* d_in, size_t n, uint64_t base_index,
                        DeviceStats* d_running, bool first);

// One per dtype, each in its own translation unit (stats_<dtype>.cu).
cudaError_t LaunchStatsFloat32(const StatsLaunch&, unsigned, const std::byte*, size_t, uint64_t,
                               DeviceStats*, bool);
cudaError_t LaunchStatsFloat16(const StatsLaunch&, unsigned, const std::byte*, size_t, uint64_t,
                               DeviceStats*, bool);
cudaError_t LaunchStatsBFloat16(const StatsLaunch&, unsigned, const std::byte*, size_t, uint64_t,
                                DeviceStats*, bool);
cudaError_t LaunchStatsFloat64(const StatsLaunch&, unsigned, const std::byte*, size_t, uint64_t,
                               DeviceStats*, bool);
cudaError_t LaunchStatsInt32(const StatsLaunch&, unsigned, const std::byte*, size_t, uint64_t,
                             DeviceStats*, bool);
cudaError_t LaunchStatsInt64(const StatsLaunch&, unsigned, const std::byte*, size_t, uint64_t,
                             DeviceStats*, bool);

}  // namespace gpureduce::kernels::cuda
