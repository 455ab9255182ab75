#pragma once

// Where the Stats of a layout's inner blocks go (issue 23). The reducer cuts a request in C order
// into inner blocks, each yielding the Stats of one or more outputs: a row (the last axes
// reduced: one output) or a table reduced down its columns (a reduced group then a kept one:
// one output per column). Where every group outside the inner block is kept, a block's Stats
// are its outputs' answers; where some is reduced (axes (0, 2) of a 3-d shape), blocks merge
// into a window of open accumulators that is answered when the outermost kept group moves on.

#include <cstdint>
#include <span>
#include <vector>

#include "common/reduction/reduce_layout.h"
#include "common/reduction/stats.h"
#include "runtime/shaped/array_results.h"

namespace gpureduce::runtime {

class OutputMap {
 public:
  // `outer`: the layout's groups outside the inner block, outermost first; `block_outputs`: the
  // Stats each block yields.
  OutputMap(std::span<const gpureduce::AxisGroup> outer, uint64_t block_outputs,
            gpureduce::DType dtype, ArrayResults& results);

  // Block `block`'s Stats (block_outputs of them); blocks arrive in order.
  void Deliver(uint64_t block, std::span<const gpureduce::Stats> stats);

  // Blocks answer their own outputs: block b's are b * block_outputs.., written as they come.
  bool direct() const { return window_.empty(); }

 private:
  void Flush(uint64_t slab);

  std::vector<gpureduce::AxisGroup> inner_groups_;  // outer groups past the slab group
  const uint64_t block_outputs_;
  uint64_t blocks_per_slab_ = 1;
  const gpureduce::DType dtype_;
  ArrayResults& results_;
  std::vector<gpureduce::Stats> window_;  // empty: blocks answer their outputs directly
};

}  // namespace gpureduce::runtime
