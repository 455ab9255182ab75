// The array kernels' instantiations for int32 and int64 (segmented_stats.cuh).
#include "kernels/cuda/segmented/segmented_stats.cuh"

namespace gpureduce::kernels::cuda {

GPUREDUCE_INSTANTIATE_SEGMENTED_STATS(DType::kInt32);
GPUREDUCE_INSTANTIATE_SEGMENTED_STATS(DType::kInt64);

}  // namespace gpureduce::kernels::cuda
