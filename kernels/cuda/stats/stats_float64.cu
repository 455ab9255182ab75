// The stats kernel's instantiations for float64 (one translation unit per dtype builds in
// parallel).
#include "kernels/cuda/stats/stats_kernel.cuh"

namespace gpureduce::kernels::cuda {

cudaError_t LaunchStatsFloat64(const StatsLaunch& launch, unsigned flags, const std::byte* d_in,
                               size_t n, uint64_t base_index, DeviceStats* d_running, bool first) {
  return DispatchStatsFlags<DType::kFloat64>(launch, flags, d_in, n, base_index, d_running, first);
}

}  // namespace gpureduce::kernels::cuda
