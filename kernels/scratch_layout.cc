#include "kernels/scratch_layout.h"

#include <algorithm>

#include "kernels/cuda/ladder/ladder_policy.h"
#include "kernels/cuda/single_pass/single_pass_policy.h"

namespace gpureduce::kernels {
namespace {

constexpr uint32_t SmallestLadderBlock() {
  uint32_t smallest = kLadder[0].min_block_size;
  for (const LadderPolicy& policy : kLadder) smallest = std::min(smallest, policy.min_block_size);
  return smallest;
}

}  // namespace

size_t LadderPartialsCapacity(size_t elements) {
  constexpr size_t kSmallestBlock = SmallestLadderBlock();
  return (elements + kSmallestBlock - 1) / kSmallestBlock;
}

SinglePassScratch CarveSinglePassScratch(ScratchCarver& carver) {
  SinglePassScratch scratch;
  scratch.counter = carver.Take<unsigned>(1);
  scratch.block_states = carver.Take<SinglePassBlockState>(kSinglePassMaxBlocks);
  return scratch;
}

StatsScratch CarveStatsScratch(ScratchCarver& carver) {
  StatsScratch scratch;
  scratch.counter = carver.Take<unsigned>(1);
  scratch.block_states = carver.Take<StatsBlockState>(kStatsMaxBlocks);
  return scratch;
}

CubScratch CarveCubScratch(ScratchCarver& carver, size_t cub_temp_bytes) {
  CubScratch scratch;
  scratch.result = carver.Take<CubChunkResult>(1);
  scratch.temp = carver.Take<std::byte>(cub_temp_bytes);
  return scratch;
}

LadderScratch CarveLadderScratch(ScratchCarver& carver, size_t max_elements) {
  LadderScratch scratch;
  scratch.result = carver.Take<float>(1);
  scratch.partials_a = carver.Take<float>(LadderPartialsCapacity(max_elements));
  scratch.partials_b = carver.Take<float>(LadderPartialsCapacity(max_elements));
  return scratch;
}

ScratchLayout CarveScratch(std::byte* d_base, size_t max_elements, size_t cub_temp_bytes) {
  ScratchLayout layout;
  ScratchCarver cub(d_base);
  layout.cub = CarveCubScratch(cub, cub_temp_bytes);
  ScratchCarver ladder(d_base);
  layout.ladder = CarveLadderScratch(ladder, max_elements);
  ScratchCarver single_pass(d_base, std::max(cub.end(), ladder.end()));
  layout.single_pass = CarveSinglePassScratch(single_pass);
  layout.stats = CarveStatsScratch(single_pass);
  layout.bytes = ScratchCarver::AlignUp(single_pass.end());
  return layout;
}

}  // namespace gpureduce::kernels
