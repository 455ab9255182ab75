#include "kernels/bench/single_pass_variants.h"

#include "kernels/cuda/single_pass/accumulators.cuh"
#include "kernels/cuda/single_pass/single_pass_launch.cuh"

namespace gpureduce::bench {

using gpureduce::Op;
using kernels::cuda::LaunchSinglePass;
using kernels::cuda::SumAccumulator;
using kernels::cuda::SumInput;

cudaError_t SinglePassSumFloat32(const kernels::cuda::SinglePassLaunch& launch, const float* d_in,
                                 size_t n, gpureduce::Partial* d_out) {
  return LaunchSinglePass<SumAccumulator<float, SumInput::kValue>>(launch, Op::kSum, d_in, n, 0,
                                                                   d_out, false);
}

cudaError_t SinglePassSumShape(const kernels::cuda::SinglePassLaunch& launch, SinglePassShape shape,
                               const float* d_in, size_t n, gpureduce::Partial* d_out) {
  using Sum = SumAccumulator<double, SumInput::kValue>;
  switch (shape) {
    case SinglePassShape::k256x8:
      return LaunchSinglePass<Sum, 256, 8>(launch, Op::kSum, d_in, n, 0, d_out, false);
    case SinglePassShape::k512x4:
      return LaunchSinglePass<Sum, 512, 4>(launch, Op::kSum, d_in, n, 0, d_out, false);
  }
  return cudaErrorInvalidValue;
}

}  // namespace gpureduce::bench
