#pragma once

// Tuning of the production kernel `single_pass`, as data, chosen by compute capability. Plain
// C++ with no dependencies. Every value of the sm_90 policy was measured on the H100
// (docs/performance.md); other architectures get untuned defaults, stated as such.

#include <cstdint>

namespace gpureduce::kernels {

struct SinglePassPolicy {
  // Threads per block; a template parameter of the kernel, like vectors_per_thread.
  uint32_t block_threads;
  // float4 loads each thread has in flight per tile.
  uint32_t vectors_per_thread;
  // The most blocks a launch uses: bounds the scratch for block partials and the last block's
  // merge.
  uint32_t max_blocks;
  // Inputs of up to this many tiles per resident block use only the blocks that fit at once
  // (each looping over its tiles); larger ones use up to max_blocks, which the hardware
  // balances over the SMs as blocks finish.
  uint32_t tiles_per_resident_block;

  constexpr uint64_t tile_vectors() const { return uint64_t{block_threads} * vectors_per_thread; }
};

// sm_90 (H100, H200), as measured on the H100:
// - 256 threads: 8 blocks per SM at full occupancy (32 registers), a fine enough grain to spread
//   over 132 SMs evenly, and few block states per thread in the last block's merge; 512x4 and
//   256x8 tiles measured no faster (gpureduce-bench's shapes).
// - 4 float4 loads per thread: a tile is 16 KiB of contiguous input, and 8 resident blocks keep
//   128 KiB per SM in flight, well over what HBM3's latency-bandwidth product asks of an SM
//   (about 25 KiB).
// - 4096 blocks at most: at 2^28 and 2^30 floats 1% faster than only the blocks that fit at once.
// - 16 tiles per resident block: at 2^24 floats (4 tiles per resident block) the resident grid
//   was 4% faster than 4096 blocks.
// Loads are evict-first streaming loads (ld.global.cs); read-only loads that ask L2 for 256-byte
// fetches (ld.global.nc.L2::256B) measured the same (0.1% apart).
inline constexpr SinglePassPolicy kSinglePassPolicySm90 = {256, 4, 4096, 16};

// Every other architecture: untuned, sm_90's values, never measured there. The same tile shape
// keeps one instantiation of the kernel per accumulator (single_pass.cu asserts it).
inline constexpr SinglePassPolicy kSinglePassPolicyDefault = kSinglePassPolicySm90;

// `compute_capability` is major * 10 + minor.
constexpr const SinglePassPolicy& SinglePassPolicyFor(int compute_capability) {
  return compute_capability / 10 == 9 ? kSinglePassPolicySm90 : kSinglePassPolicyDefault;
}

// The most blocks any policy launches: the block states a stream's scratch holds for the kernel
// (kernels/scratch_layout.h).
inline constexpr uint32_t kSinglePassMaxBlocks =
    kSinglePassPolicySm90.max_blocks > kSinglePassPolicyDefault.max_blocks
        ? kSinglePassPolicySm90.max_blocks
        : kSinglePassPolicyDefault.max_blocks;

}  // namespace gpureduce::kernels
