#pragma once

// Tuning of the production kernel `single_pass`, as data. Plain C++ with no dependencies, so the
// catalogue (host) and the dispatch (CUDA) read the same values.

#include <cstddef>
#include <cstdint>

namespace gpureduce::kernels {

struct SinglePassPolicy {
  // 256 threads: 8 blocks per SM at full occupancy (32 registers), a fine enough grain to spread
  // over 132 SMs evenly, and few block states per thread in the last block's merge.
  static constexpr uint32_t kBlockThreads = 256;
  // float4 loads each thread has in flight per tile: a tile is 16 KiB of contiguous input, and
  // 8 resident blocks keep 128 KiB per SM in flight, well over what HBM3's latency-bandwidth
  // product asks of an SM (about 25 KiB).
  static constexpr uint32_t kVectorsPerThread = 4;
  // Loads are evict-first streaming loads (ld.global.cs). Read-only loads that ask L2 for
  // 256-byte fetches (ld.global.nc.L2::256B) measured the same on the H100 (0.1% apart).
  // The most blocks a launch uses: bounds the scratch for block partials and the last block's
  // merge (16 states per thread).
  static constexpr uint32_t kMaxBlocks = 4096;
  // Inputs of up to this many tiles per resident block use only the blocks that fit at once
  // (each looping over its tiles); larger ones use up to kMaxBlocks, which the hardware balances
  // over the SMs as blocks finish. Measured on the H100: at 2^24 floats (4 tiles per resident
  // block) the resident grid was 4% faster than 4096 blocks; at 2^28 and 2^30, 4096 blocks were
  // 1% faster.
  static constexpr uint32_t kTilesPerResidentBlock = 16;
  // Overrides the cap on blocks (the benchmark's --max-blocks); 0: the rule above.
  uint32_t max_blocks = 0;
};

// Device scratch the kernel keeps at the end of a stream's scratch: a launch counter that the
// last block resets, and the block partials (16 bytes at most each).
inline constexpr size_t kSinglePassScratchBytes = 256 + SinglePassPolicy::kMaxBlocks * 16;

}  // namespace gpureduce::kernels
