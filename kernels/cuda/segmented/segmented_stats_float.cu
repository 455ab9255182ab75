// The array kernels' instantiations for float32 and float64 (segmented_stats.cuh).
#include "kernels/cuda/segmented/segmented_stats.cuh"

namespace gpureduce::kernels::cuda {

GPUREDUCE_INSTANTIATE_SEGMENTED_STATS(DType::kFloat32);
GPUREDUCE_INSTANTIATE_SEGMENTED_STATS(DType::kFloat64);

}  // namespace gpureduce::kernels::cuda
