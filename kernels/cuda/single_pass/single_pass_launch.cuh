#pragma once

// The dispatch layer of `single_pass`: the grid for an input and one launch of the kernel with a
// given accumulator and tile shape. single_pass.cu instantiates it for the production kernels;
// the benchmark (kernels/bench/) for variants that only it measures.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/single_pass/single_pass.h"
#include "kernels/cuda/single_pass/single_pass_kernel.cuh"

namespace gpureduce::kernels::cuda {

// One tile shape serves every policy, so each accumulator's kernel is instantiated once; a
// policy with another shape needs its own instantiation in SinglePassReduce.
inline constexpr SinglePassPolicy kSinglePassShape = kSinglePassPolicySm90;
static_assert(kSinglePassPolicyDefault.block_threads == kSinglePassShape.block_threads &&
              kSinglePassPolicyDefault.vectors_per_thread == kSinglePassShape.vectors_per_thread);

template <typename AccumulatorT, unsigned kBlockT, unsigned kVectorsT>
constexpr auto kSinglePassKernel = SinglePassKernel<AccumulatorT, kBlockT, kVectorsT>;

// Blocks of this instantiation that fit on one SM; asked once per instantiation.
template <typename AccumulatorT, unsigned kBlockT, unsigned kVectorsT>
unsigned ResidentBlocksPerSm() {
  static const unsigned resident = [] {
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &blocks, kSinglePassKernel<AccumulatorT, kBlockT, kVectorsT>, kBlockT, 0) !=
            cudaSuccess ||
        blocks < 1) {
      return 1u;
    }
    return static_cast<unsigned>(blocks);
  }();
  return resident;
}

// At most as many blocks as fit on the device at once while each gets a few tiles, up to the
// policy's max_blocks for larger inputs (single_pass_policy.h says what each choice measured).
// Every block gets the same number of tiles, so no last round runs half empty.
inline unsigned SinglePassGrid(const SinglePassLaunch& launch, const SinglePassPolicy& policy,
                               size_t n, uint64_t tile_vectors, unsigned resident_per_sm) {
  const uint64_t resident = uint64_t(std::max(1, launch.gpu.multiprocessors)) * resident_per_sm;
  const uint64_t tiles = std::max<uint64_t>(1, (n / 4 + tile_vectors - 1) / tile_vectors);
  uint64_t cap = tiles <= uint64_t{policy.tiles_per_resident_block} * resident
                     ? resident
                     : uint64_t{policy.max_blocks};
  if (launch.max_blocks != 0) cap = launch.max_blocks;
  cap = std::min<uint64_t>(cap, kSinglePassMaxBlocks);
  const uint64_t rounds = (tiles + cap - 1) / cap;
  return static_cast<unsigned>((tiles + rounds - 1) / rounds);
}

template <typename AccumulatorT, unsigned kBlockT = kSinglePassShape.block_threads,
          unsigned kVectorsT = kSinglePassShape.vectors_per_thread>
cudaError_t LaunchSinglePass(const SinglePassLaunch& launch, Op op, const float* d_in, size_t n,
                             uint64_t base_index, Partial* d_out, bool accumulate) {
  static_assert(sizeof(AccumulatorT) <= sizeof(SinglePassBlockState) &&
                alignof(SinglePassBlockState) % alignof(AccumulatorT) == 0);
  const SinglePassPolicy& policy = SinglePassPolicyFor(launch.gpu.compute_capability);
  const unsigned grid = SinglePassGrid(launch, policy, n, uint64_t{kBlockT} * kVectorsT,
                                       ResidentBlocksPerSm<AccumulatorT, kBlockT, kVectorsT>());
  const SinglePassOutput output{d_out, accumulate, launch.scratch.counter.d_data,
                                launch.scratch.block_states.d_data};
  kSinglePassKernel<AccumulatorT, kBlockT, kVectorsT>
      <<<grid, kBlockT, 0, launch.stream>>>(d_in, n, base_index, op, output);
  return cudaGetLastError();
}

}  // namespace gpureduce::kernels::cuda
