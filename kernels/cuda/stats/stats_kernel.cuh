#pragma once

// The stats kernel: single_pass's structure (single_pass_kernel.cuh) for any dtype and any group
// of accumulations. One launch; each block reads tiles of 256 threads x 4 16-byte vectors with
// all of a tile's loads in flight, striding over the tiles by the grid; the vectors start at the
// first 512-byte boundary, the elements before it go one each to block 0's first threads, the
// ones after the last whole vector to the last block's, so every thread sees its elements in
// increasing index. Each block merges its threads' states and stores its own; the last block to
// finish (a counter in scratch) merges the block states in block order and folds the chunk into
// the running Stats. Deterministic: the same input gives the same bits.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/single_pass/block_merge.cuh"
#include "kernels/cuda/stats/stats_launch.h"
#include "kernels/cuda/stats/stats_merge.cuh"
#include "kernels/cuda/stats/stats_policy.h"
#include "kernels/cuda/stats/stats_state.cuh"

namespace gpureduce::kernels::cuda {

inline constexpr uint64_t kStatsBodyAlignment = 512;

struct StatsOutput {
  DeviceStats* d_running;
  bool first;                       // store the chunk's stats rather than merge them in
  unsigned* d_counter;              // zero between launches; the last block resets it
  StatsBlockState* d_block_states;  // one per block at most
};

// Reads a state another block wrote, from L2 (L1 is not coherent across SMs), in the widest
// loads the states' stride allows (they start at a 256-byte aligned array).
template <typename T>
__device__ inline T LoadStateFromL2(const T* source) {
  T out;
  if constexpr (!std::is_empty_v<T>) {
    using Word = std::conditional_t<sizeof(T) % 16 == 0, uint4,
                                    std::conditional_t<sizeof(T) % 8 == 0, uint2, unsigned>>;
    static_assert(sizeof(T) % sizeof(unsigned) == 0);
    const Word* from = reinterpret_cast<const Word*>(source);
    Word words[sizeof(T) / sizeof(Word)];
#pragma unroll
    for (unsigned w = 0; w < sizeof(T) / sizeof(Word); ++w) words[w] = __ldcg(from + w);
    memcpy(&out, words, sizeof(T));
  }
  return out;
}

// One tile of `count` vectors from vector `first` (after `head` scalar elements): every load
// issued before the first use. A full tile (kFullT) checks no bounds.
template <bool kFullT, DType kDTypeT, unsigned kFlagsT>
__device__ __forceinline__ void ReadStatsTile(ThreadStats<kDTypeT, kFlagsT>& state,
                                              const uint4* __restrict__ d_vectors, uint64_t first,
                                              uint64_t count, uint64_t head) {
  using Traits = StatsDType<kDTypeT>;
  constexpr unsigned kThreads = kStatsBlockThreads, kVectors = kStatsVectorsPerThread;
  const unsigned tid = threadIdx.x;
  uint4 loaded[kVectors];
#pragma unroll
  for (unsigned k = 0; k < kVectors; ++k) {
    if (kFullT || tid + k * kThreads < count) {
      loaded[k] = __ldcs(d_vectors + first + tid + k * kThreads);
    }
  }
#pragma unroll
  for (unsigned k = 0; k < kVectors; ++k) {
    if (kFullT || tid + k * kThreads < count) {
      state.AddRaw(loaded[k],
                   static_cast<int64_t>(head + Traits::kLanes * (first + tid + k * kThreads)));
    }
  }
}

// Blocks per SM the register budget is set for: 4 (64 registers) where a thread's state is small,
// 3 (80) for moments and combinations, which at 64 spill in the reading loop (ptxas -v: 200 to
// 700 bytes for the five-op request) and at no cap take 94 to 111 (2 blocks, 32 KiB in flight).
constexpr unsigned StatsMinBlocks(unsigned flags) {
  return flags == 0 || flags == kStatsSum || flags == (kStatsSum | kStatsSumSquares) ||
                 flags == kStatsExtremes || flags == kStatsProd
             ? 4
             : 3;
}

template <DType kDTypeT, unsigned kFlagsT>
__global__ void __launch_bounds__(kStatsBlockThreads, StatsMinBlocks(kFlagsT))
    StatsKernel(const typename StatsDType<kDTypeT>::Storage* __restrict__ d_in, uint64_t n,
                uint64_t base_index, StatsOutput output) {
  using Traits = StatsDType<kDTypeT>;
  using Block = BlockStats<kDTypeT, kFlagsT>;
  constexpr unsigned kThreads = kStatsBlockThreads;
  constexpr uint64_t kTile = uint64_t{kThreads} * kStatsVectorsPerThread;
  constexpr uint64_t kSize = sizeof(typename Traits::Storage);
  static_assert(kThreads >= kStatsBodyAlignment / 2, "a thread per head element");
  static_assert(sizeof(Block) <= sizeof(StatsBlockState) &&
                alignof(StatsBlockState) % alignof(Block) == 0);

  const uint64_t to_boundary =
      (kStatsBodyAlignment - reinterpret_cast<uintptr_t>(d_in) % kStatsBodyAlignment) %
      kStatsBodyAlignment / kSize;
  const uint64_t head = to_boundary < n ? to_boundary : n;
  const uint64_t vectors = (n - head) / Traits::kLanes;
  const uint64_t tail_start = head + Traits::kLanes * vectors;
  const uint4* __restrict__ d_vectors = reinterpret_cast<const uint4*>(d_in + head);
  const unsigned tid = threadIdx.x;

  ThreadStats<kDTypeT, kFlagsT> state;
  if (blockIdx.x == 0 && tid < head) state.AddScalar(Traits::Load(d_in + tid), tid);
  const uint64_t full_tiles = vectors / kTile;
  for (uint64_t tile = blockIdx.x; tile < full_tiles; tile += gridDim.x) {
    ReadStatsTile<true>(state, d_vectors, tile * kTile, kTile, head);
  }
  const uint64_t rest = vectors - full_tiles * kTile;
  if (rest > 0 && blockIdx.x == full_tiles % gridDim.x) {
    ReadStatsTile<false>(state, d_vectors, full_tiles * kTile, rest, head);
  }
  if (blockIdx.x == gridDim.x - 1 && tail_start + tid < n) {
    state.AddScalar(Traits::Load(d_in + tail_start + tid), static_cast<int64_t>(tail_start + tid));
  }

  Block block = BlockMerge<Block, kThreads>(state.ToBlock());
  if (gridDim.x > 1) {
    auto* d_states = reinterpret_cast<Block*>(output.d_block_states);
    __shared__ bool is_last;
    if (threadIdx.x == 0) {
      d_states[blockIdx.x] = block;
      __threadfence();  // the state is visible before the counter says so
      is_last = atomicAdd(output.d_counter, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!is_last) return;
    __threadfence();
    // Thread t merges blocks t, t + 256, ... in order (a few each: the grid is the resident
    // blocks), one load at a time to keep registers for the reading loop.
    Block total;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += kThreads) {
      total.Merge(LoadStateFromL2(d_states + b));
    }
    // The loop's trip count differs within a warp: reconverged here, the warp merge's shuffles
    // run converged. Without it they took a divergent path that cost the five-op request 12 us
    // a launch at every size (H200; docs/performance.md).
    __syncwarp();
    block = BlockMerge<Block, kThreads>(total);
  }
  if (threadIdx.x == 0) {
    const DeviceStats chunk = ToDeviceStats(block, n, base_index);
    *output.d_running = output.first ? chunk : MergeDeviceStats(*output.d_running, chunk);
    if (gridDim.x > 1) *output.d_counter = 0;  // ready for the next launch on this scratch
  }
}

// Blocks of this instantiation that fit on one SM; asked once per instantiation.
template <DType kDTypeT, unsigned kFlagsT>
unsigned StatsResidentBlocksPerSm() {
  static const unsigned resident = [] {
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, StatsKernel<kDTypeT, kFlagsT>,
                                                      kStatsBlockThreads, 0) != cudaSuccess ||
        blocks < 1) {
      return 1u;
    }
    return static_cast<unsigned>(blocks);
  }();
  return resident;
}

// At most the blocks resident at once (launch.max_blocks overrides), every block with the same
// number of tiles so no last round runs half empty.
inline unsigned StatsGrid(const StatsLaunch& launch, uint64_t vectors, unsigned resident_per_sm) {
  constexpr uint64_t kTile = uint64_t{kStatsBlockThreads} * kStatsVectorsPerThread;
  uint64_t cap = uint64_t(std::max(1, launch.gpu.multiprocessors)) * resident_per_sm;
  if (launch.max_blocks != 0) cap = launch.max_blocks;
  cap = std::min<uint64_t>(cap, kStatsMaxBlocks);
  const uint64_t tiles = std::max<uint64_t>(1, (vectors + kTile - 1) / kTile);
  const uint64_t rounds = (tiles + cap - 1) / cap;
  return static_cast<unsigned>((tiles + rounds - 1) / rounds);
}

template <DType kDTypeT, unsigned kFlagsT>
cudaError_t LaunchStatsKernel(const StatsLaunch& launch, const std::byte* d_in, size_t n,
                              uint64_t base_index, DeviceStats* d_running, bool first) {
  using Storage = typename StatsDType<kDTypeT>::Storage;
  const unsigned grid = StatsGrid(launch, n / StatsDType<kDTypeT>::kLanes,
                                  StatsResidentBlocksPerSm<kDTypeT, kFlagsT>());
  const StatsOutput output{d_running, first, launch.scratch.counter.d_data,
                           launch.scratch.block_states.d_data};
  StatsKernel<kDTypeT, kFlagsT><<<grid, kStatsBlockThreads, 0, launch.stream>>>(
      reinterpret_cast<const Storage*>(d_in), n, base_index, output);
  return cudaGetLastError();
}

// The instantiation for `flags` (one of kStatsInstantiations).
template <DType kDTypeT>
cudaError_t DispatchStatsFlags(const StatsLaunch& launch, unsigned flags, const std::byte* d_in,
                               size_t n, uint64_t base_index, DeviceStats* d_running, bool first) {
  constexpr unsigned S = kStatsSum, Q = kStatsSumSquares, M = kStatsMoments, E = kStatsExtremes;
  switch (flags) {
#define GPUREDUCE_STATS_CASE(F) \
  case (F):                     \
    return LaunchStatsKernel<kDTypeT, (F)>(launch, d_in, n, base_index, d_running, first);
    GPUREDUCE_STATS_CASE(0u)
    GPUREDUCE_STATS_CASE(S)
    GPUREDUCE_STATS_CASE(S | Q)
    GPUREDUCE_STATS_CASE(S | M)
    GPUREDUCE_STATS_CASE(S | Q | M)
    GPUREDUCE_STATS_CASE(E)
    GPUREDUCE_STATS_CASE(S | E)
    GPUREDUCE_STATS_CASE(S | Q | E)
    GPUREDUCE_STATS_CASE(S | M | E)
    GPUREDUCE_STATS_CASE(S | Q | M | E)
    GPUREDUCE_STATS_CASE(kStatsProd)
    GPUREDUCE_STATS_CASE(kStatsAll)
#undef GPUREDUCE_STATS_CASE
    default:
      break;
  }
  return cudaErrorInvalidValue;
}

}  // namespace gpureduce::kernels::cuda
