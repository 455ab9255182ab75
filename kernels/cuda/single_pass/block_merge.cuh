#pragma once

// Warp and block merges of any single_pass accumulator (see accumulators.cuh).

#include <cuda_runtime.h>

namespace gpureduce::kernels::cuda {

template <typename AccumulatorT>
__device__ inline AccumulatorT WarpMerge(AccumulatorT state) {
#pragma unroll
  for (unsigned delta = 16; delta > 0; delta /= 2) state.Merge(state.ShuffleDown(delta));
  return state;  // lane 0 holds the warp's state
}

// Every thread passes its state; thread 0 gets the block's. Ends with a barrier, so the shared
// memory can be used again right after.
template <typename AccumulatorT, unsigned kBlockThreads>
__device__ inline AccumulatorT BlockMerge(AccumulatorT state) {
  static_assert(kBlockThreads % 32 == 0 && kBlockThreads <= 1024);
  constexpr unsigned kWarps = kBlockThreads / 32;
  // Raw storage: accumulators have default member initializers, which __shared__ may not run.
  __shared__ alignas(AccumulatorT) unsigned char storage[kWarps * sizeof(AccumulatorT)];
  AccumulatorT* warp_states = reinterpret_cast<AccumulatorT*>(storage);
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  state = WarpMerge(state);
  if (lane == 0) warp_states[warp] = state;
  __syncthreads();
  if (warp == 0) {
    state = lane < kWarps ? warp_states[lane] : AccumulatorT{};
    state = WarpMerge(state);
  }
  __syncthreads();
  return state;
}

}  // namespace gpureduce::kernels::cuda
