#pragma once

// Where one request keeps its running partial: pinned host memory the GPU maps, so the kernels
// write the result where the host reads it, and no copy back is queued.

#include "common/reduction/partial.h"
#include "common/reduction/stats.h"

namespace gpureduce::runtime {

// A classic kernel's running Partial, or the stats kernel's running Stats, in one slot.
union RunningResult {
  gpureduce::Partial partial;
  gpureduce::Stats stats;
};

struct PartialSlot {
  gpureduce::Partial* device;  // the GPU's address of `host`
  gpureduce::Partial* host;
  gpureduce::Stats* stats_device;  // the same memory, for a stats request
  gpureduce::Stats* stats_host;
};

}  // namespace gpureduce::runtime
