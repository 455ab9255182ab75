// The array kernels' instantiations for float16 and bfloat16 (segmented_stats.cuh).
#include "kernels/cuda/segmented/segmented_stats.cuh"

namespace gpureduce::kernels::cuda {

GPUREDUCE_INSTANTIATE_SEGMENTED_STATS(DType::kFloat16);
GPUREDUCE_INSTANTIATE_SEGMENTED_STATS(DType::kBFloat16);

}  // namespace gpureduce::kernels::cuda
