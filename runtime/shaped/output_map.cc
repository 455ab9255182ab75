#include "runtime/shaped/output_map.h"

#include <algorithm>

#include "kernels/reduce.h"

namespace gpureduce::runtime {

OutputMap::OutputMap(std::span<const gpureduce::AxisGroup> outer, uint64_t block_outputs,
                     gpureduce::DType dtype, ArrayResults& results)
    : block_outputs_(block_outputs), dtype_(dtype), results_(results) {
  const bool any_reduced = std::any_of(outer.begin(), outer.end(),
                                       [](const gpureduce::AxisGroup& g) { return g.reduced; });
  if (!any_reduced) return;  // every outer group kept: a block's index is its outputs' place
  // The outermost kept group (if the outer groups start with one) advances slab by slab; the
  // window holds the outputs of one slab.
  const size_t first = outer.front().reduced ? 0 : 1;
  inner_groups_.assign(outer.begin() + first, outer.end());
  uint64_t window = block_outputs;
  for (const gpureduce::AxisGroup& group : inner_groups_) {
    blocks_per_slab_ *= group.extent;
    if (!group.reduced) window *= group.extent;
  }
  window_.assign(window, kernels::cpu::EmptyStats(dtype));
}

void OutputMap::Deliver(uint64_t block, std::span<const gpureduce::Stats> stats) {
  if (window_.empty()) {
    results_.Write(block * block_outputs_, stats.first(block_outputs_));
    return;
  }
  // The block's place in its slab, digit by digit from the innermost group: its kept digits
  // name the window's accumulators.
  uint64_t rest = block % blocks_per_slab_;
  uint64_t place = 0;
  uint64_t scale = 1;
  for (size_t i = inner_groups_.size(); i-- > 0;) {
    const uint64_t digit = rest % inner_groups_[i].extent;
    rest /= inner_groups_[i].extent;
    if (!inner_groups_[i].reduced) {
      place += digit * scale;
      scale *= inner_groups_[i].extent;
    }
  }
  for (uint64_t c = 0; c < block_outputs_; ++c) {
    gpureduce::Stats& into = window_[place * block_outputs_ + c];
    into = gpureduce::MergeStats(into, stats[c]);
  }
  if ((block + 1) % blocks_per_slab_ == 0) Flush(block / blocks_per_slab_);
}

void OutputMap::Flush(uint64_t slab) {
  const uint64_t base = slab * window_.size();
  results_.Write(base, window_);
  std::fill(window_.begin(), window_.end(), kernels::cpu::EmptyStats(dtype_));
}

}  // namespace gpureduce::runtime
