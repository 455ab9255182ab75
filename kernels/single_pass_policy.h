#pragma once

// Tuning of the production kernel `single_pass`, as data. Plain C++ with no dependencies, so the
// catalogue (host) and the dispatch (CUDA) read the same values.

#include <cstddef>
#include <cstdint>

namespace gpureduce::kernels {

struct SinglePassPolicy {
  // 256 threads: 8 blocks per SM at full occupancy, so the grid is fine-grained enough to spread
  // over 132 SMs evenly, and the last block's combine reads few partials per thread.
  static constexpr uint32_t kBlockThreads = 256;
  // float4 loads each thread has in flight per loop iteration: 4 x 16 B x 2048 threads = 128 KiB
  // per SM, well over what HBM3's latency-bandwidth product asks of an SM (about 25 KiB).
  static constexpr uint32_t kVectorsPerThread = 4;
  // The most blocks a launch uses: bounds the scratch for block partials.
  static constexpr uint32_t kMaxBlocks = 4096;
  // Blocks per SM when the input is large enough to fill them (0: as many as fit).
  uint32_t blocks_per_sm = 0;
  // Inputs too small to give every thread a full iteration still get this many blocks per SM
  // (capped by one float4 per thread), so that every SM's load units pull from memory at once.
  uint32_t min_blocks_per_sm = 1;
};

// Device scratch the kernel keeps at the end of a stream's scratch: a launch counter that the
// last block resets, and the block partials (16 bytes at most each).
inline constexpr size_t kSinglePassScratchBytes = 256 + SinglePassPolicy::kMaxBlocks * 16;

}  // namespace gpureduce::kernels
