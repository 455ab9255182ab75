// Placeholder until the stats kernels land: the runtime's array-API path links against it.
#include "kernels/reduce.h"

namespace gpureduce::kernels::cuda {

cudaError_t ReduceStatsInto(const ChunkLaunch&, DType, const StatsNeeds&, const std::byte*, size_t,
                            uint64_t, Stats*) {
  return cudaErrorNotSupported;
}

}  // namespace gpureduce::kernels::cuda
