#pragma once

// Tuning of the segmented and strided SUM kernels (segmented_sum.h), as data. First values,
// chosen by reasoning, not yet by measurement: docs/performance.md records what the H100 says of
// them (issue 23), and they change with it.

#include <cstdint>

namespace gpureduce::kernels {

struct SegmentedPolicy {
  uint32_t block_threads = 256;
  // Short segments go to groups of lanes, each lane reading about four loads of a segment: up to
  // mean length 64 scalar loads (1 to 8 lanes), from it float4 loads (4 to 32 lanes: pow2 of
  // mean / 16), so that each lane has its loads in flight at once (a warp per segment of 128,
  // one float4 a lane, read at 0.57 of the full reduction on the H200).
  uint64_t vector_from = 64;
  // From this mean length a block per segment, as CUB does (a warp per segment of 8Ki floats
  // read 0.99x CUB on the H200), and from
  // ranges_from on, fixed ranges of the array per block (too few segments to fill the GPU).
  uint64_t block_from = 4096;
  uint64_t ranges_from = 524288;
  // The elements each block's range holds: 64Ki floats, 256 KiB.
  uint64_t range_elements = uint64_t{1} << 16;
  // float4 loads each lane has in flight in the warp and range kernels.
  uint32_t vectors_in_flight = 4;
  // Strided (column) sums: rows per thread at least this many (the partials' second pass reads
  // 8 bytes per column per chunk of rows, against 4 per element of the first).
  uint64_t strided_min_rows = 64;
};

inline constexpr SegmentedPolicy kSegmentedPolicy = {};

}  // namespace gpureduce::kernels
