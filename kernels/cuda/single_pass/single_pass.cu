#include "kernels/cuda/single_pass/single_pass.h"

#include "kernels/cuda/single_pass/accumulators.cuh"
#include "kernels/cuda/single_pass/single_pass_launch.cuh"
#include "kernels/op_dispatch.h"

namespace gpureduce::kernels::cuda {

cudaError_t SinglePassReduce(const SinglePassLaunch& launch, Op op, const float* d_in, size_t n,
                             uint64_t base_index, Partial* d_out, bool accumulate) {
  return DispatchOp(op, cudaErrorInvalidValue, [&](auto reduction) {
    return LaunchSinglePass<SinglePassAccumulator<decltype(reduction)>>(
        launch, op, d_in, n, base_index, d_out, accumulate);
  });
}

}  // namespace gpureduce::kernels::cuda
