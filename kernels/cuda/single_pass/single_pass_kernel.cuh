#pragma once

// The production reduction in one launch. Each block reads tiles of kBlockThreadsT x kVectorsT
// float4 vectors (contiguous, so DRAM pages are read whole) with all of a tile's loads in flight
// at once, striding over the tiles by the grid (single_pass.cu sizes it), and accumulates per op
// (accumulators.cuh). Each block merges its threads and stores its state; the last block to
// finish (a counter in scratch tells it) merges the block states in block order, so the result
// is deterministic, and folds the chunk into the output Partial. No second launch, no host round
// trip.
//
// Any alignment: the vectors start at the first 512-byte boundary, so a warp's 512-byte load
// covers whole cache lines and tiles sit on the same boundaries whatever the input's offset. The
// elements before it (at most 127) go one each to the first threads of block 0, before their
// vectors; the elements after the last whole vector (at most 3) one each to the first threads of
// the last block, after theirs. So every thread sees its elements in increasing index, which
// ARGMIN/ARGMAX's first occurrence relies on.

#include <cuda_runtime.h>

#include <cstdint>

#include "common/reduction/op.h"
#include "common/reduction/partial.h"
#include "kernels/cuda/single_pass/block_merge.cuh"
#include "kernels/scratch_layout.h"

namespace gpureduce::kernels::cuda {

inline constexpr uint64_t kBodyAlignment = 512;

struct SinglePassOutput {
  Partial* d_out;                        // device or mapped host memory
  bool accumulate;                       // fold into *d_out (true) or overwrite it
  unsigned* d_counter;                   // zero between launches; the last block resets it
  SinglePassBlockState* d_block_states;  // one per block at most
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

// Adds one tile of `count` vectors starting at vector `first` (after the `head` elements before
// the first vector): every load issued before the first add. A full tile (kFullT) needs no bound
// checks; the last, partial one checks each load against `count`.
template <bool kFullT, unsigned kBlockThreadsT, unsigned kVectorsT, typename AccumulatorT>
__device__ __forceinline__ void ReadTile(AccumulatorT& state, const float4* __restrict__ d_vectors,
                                         uint64_t first, uint64_t count, uint64_t head) {
  const unsigned tid = threadIdx.x;
  float4 loaded[kVectorsT];
#pragma unroll
  for (unsigned k = 0; k < kVectorsT; ++k) {
    if (kFullT || tid + k * kBlockThreadsT < count) {
      loaded[k] = __ldcs(d_vectors + first + tid + k * kBlockThreadsT);
    }
  }
#pragma unroll
  for (unsigned k = 0; k < kVectorsT; ++k) {
    if (kFullT || tid + k * kBlockThreadsT < count) {
      state.Add4(loaded[k], static_cast<int64_t>(head + 4 * (first + tid + k * kBlockThreadsT)));
    }
  }
}

template <typename AccumulatorT, unsigned kBlockThreadsT, unsigned kVectorsT>
__global__ void __launch_bounds__(kBlockThreadsT)
    SinglePassKernel(const float* __restrict__ d_in, uint64_t n, uint64_t base_index, Op op,
                     SinglePassOutput output) {
  static_assert(kBlockThreadsT >= kBodyAlignment / sizeof(float), "a thread per head element");
  constexpr uint64_t kTile = uint64_t{kBlockThreadsT} * kVectorsT;
  const uint64_t to_boundary =
      (kBodyAlignment - reinterpret_cast<uintptr_t>(d_in) % kBodyAlignment) % kBodyAlignment / 4;
  const uint64_t head = to_boundary < n ? to_boundary : n;
  const uint64_t vectors = (n - head) / 4;
  const uint64_t tail_start = head + 4 * vectors;
  const float4* __restrict__ d_vectors = reinterpret_cast<const float4*>(d_in + head);
  const unsigned tid = threadIdx.x;

  AccumulatorT state;
  if (blockIdx.x == 0 && tid < head) state.Add(d_in[tid], tid);
  const uint64_t full_tiles = vectors / kTile;
  for (uint64_t tile = blockIdx.x; tile < full_tiles; tile += gridDim.x) {
    ReadTile<true, kBlockThreadsT, kVectorsT>(state, d_vectors, tile * kTile, kTile, head);
  }
  // The partial last tile goes to the block whose turn it is, its loads also all in flight.
  const uint64_t rest = vectors - full_tiles * kTile;
  if (rest > 0 && blockIdx.x == full_tiles % gridDim.x) {
    ReadTile<false, kBlockThreadsT, kVectorsT>(state, d_vectors, full_tiles * kTile, rest, head);
  }
  if (blockIdx.x == gridDim.x - 1 && tail_start + tid < n) {
    state.Add(d_in[tail_start + tid], static_cast<int64_t>(tail_start + tid));
  }

  state = BlockMerge<AccumulatorT, kBlockThreadsT>(state);
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) WriteChunk(state, op, n, base_index, output);
    return;
  }
  // Packed at the accumulator's own size, so the last block reads as few bytes as it can.
  auto* d_states = reinterpret_cast<AccumulatorT*>(output.d_block_states);
  __shared__ bool is_last;
  if (threadIdx.x == 0) {
    d_states[blockIdx.x] = state;
    __threadfence();  // the state is visible before the counter says so
    is_last = atomicAdd(output.d_counter, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  // Up to 16 states per thread: four loads in flight at a time rather than one round trip each.
  AccumulatorT total;
  constexpr unsigned kBatch = 4;
  for (unsigned first = threadIdx.x; first < gridDim.x; first += kBatch * kBlockThreadsT) {
    AccumulatorT batch[kBatch];
#pragma unroll
    for (unsigned k = 0; k < kBatch; ++k) {
      const unsigned block = first + k * kBlockThreadsT;
      if (block < gridDim.x) batch[k] = LoadFromL2(d_states + block);
    }
#pragma unroll
    for (unsigned k = 0; k < kBatch; ++k) total.Merge(batch[k]);  // unloaded ones are identities
  }
  total = BlockMerge<AccumulatorT, kBlockThreadsT>(total);
  if (threadIdx.x == 0) {
    WriteChunk(total, op, n, base_index, output);
    *output.d_counter = 0;  // ready for the next launch on this scratch
  }
}

}  // namespace gpureduce::kernels::cuda
