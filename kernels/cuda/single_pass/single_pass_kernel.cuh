#pragma once

// The production reduction in one launch. Each thread reads float4 vectors on a grid-stride loop
// with kVectorsT loads in flight, accumulating per op (accumulators.cuh); each block merges its
// threads and stores its state; the last block to finish (a counter in scratch tells it) merges
// the block states in block order, so the result is deterministic, and folds the chunk into the
// output Partial. No second launch, no host round trip.
//
// Any alignment: the elements before the first 16-byte boundary (at most 3) go to the first
// thread before its vectors and those after the last whole vector to the last thread after its
// vectors, so every thread still sees its elements in increasing index.

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/single_pass/block_merge.cuh"
#include "kernels/op.h"
#include "kernels/partial.h"

namespace gpureduce::kernels::cuda {

struct SinglePassOutput {
  Partial* d_out;       // device or mapped host memory
  bool accumulate;      // fold into *d_out (true) or overwrite it
  unsigned* d_counter;  // zero between launches; the last block resets it
  void* d_block_states;
};

// Reads a state another block wrote, from L2 (L1 is not coherent across SMs).
template <typename T>
__device__ inline T LoadFromL2(const T* source) {
  static_assert(sizeof(T) % sizeof(unsigned) == 0);
  T out;
  const unsigned* from = reinterpret_cast<const unsigned*>(source);
  unsigned* to = reinterpret_cast<unsigned*>(&out);
#pragma unroll
  for (unsigned w = 0; w < sizeof(T) / sizeof(unsigned); ++w) to[w] = __ldcg(from + w);
  return out;
}

template <typename AccumulatorT>
__device__ inline void WriteChunk(const AccumulatorT& state, Op op, uint64_t n, uint64_t base_index,
                                  const SinglePassOutput& output) {
  const Partial chunk = state.ToPartial(n, base_index);
  *output.d_out = output.accumulate ? Combine(op, *output.d_out, chunk) : chunk;
}

template <typename AccumulatorT, unsigned kBlockThreadsT, unsigned kVectorsT>
__global__ void __launch_bounds__(kBlockThreadsT)
    SinglePassKernel(const float* __restrict__ d_in, uint64_t n, uint64_t base_index, Op op,
                     SinglePassOutput output) {
  const uint64_t misaligned = (reinterpret_cast<uintptr_t>(d_in) / sizeof(float)) % 4;
  const uint64_t head = misaligned == 0 ? 0 : (4 - misaligned < n ? 4 - misaligned : n);
  const uint64_t vectors = (n - head) / 4;
  const float4* __restrict__ d_vectors = reinterpret_cast<const float4*>(d_in + head);
  const uint64_t thread = uint64_t{blockIdx.x} * kBlockThreadsT + threadIdx.x;
  const uint64_t threads = uint64_t{gridDim.x} * kBlockThreadsT;

  AccumulatorT state;
  if (thread == 0) {
    for (uint64_t i = 0; i < head; ++i) state.Add(d_in[i], static_cast<int64_t>(i));
  }
  uint64_t v = thread;
  for (; v + (kVectorsT - 1) * threads < vectors; v += kVectorsT * threads) {
    float4 loaded[kVectorsT];
#pragma unroll
    for (unsigned k = 0; k < kVectorsT; ++k) loaded[k] = __ldcs(d_vectors + v + k * threads);
#pragma unroll
    for (unsigned k = 0; k < kVectorsT; ++k) {
      state.Add4(loaded[k], static_cast<int64_t>(head + 4 * (v + k * threads)));
    }
  }
  for (; v < vectors; v += threads) {
    state.Add4(__ldcs(d_vectors + v), static_cast<int64_t>(head + 4 * v));
  }
  if (thread == threads - 1) {
    for (uint64_t i = head + 4 * vectors; i < n; ++i) state.Add(d_in[i], static_cast<int64_t>(i));
  }

  state = BlockMerge<AccumulatorT, kBlockThreadsT>(state);
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) WriteChunk(state, op, n, base_index, output);
    return;
  }
  auto* d_states = static_cast<AccumulatorT*>(output.d_block_states);
  __shared__ bool is_last;
  if (threadIdx.x == 0) {
    d_states[blockIdx.x] = state;
    __threadfence();  // the state is visible before the counter says so
    is_last = atomicAdd(output.d_counter, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  AccumulatorT total;
  for (unsigned block = threadIdx.x; block < gridDim.x; block += kBlockThreadsT) {
    total.Merge(LoadFromL2(d_states + block));
  }
  total = BlockMerge<AccumulatorT, kBlockThreadsT>(total);
  if (threadIdx.x == 0) {
    WriteChunk(total, op, n, base_index, output);
    *output.d_counter = 0;  // ready for the next launch on this scratch
  }
}

}  // namespace gpureduce::kernels::cuda
