#pragma once

// Where one request keeps its running partial: pinned host memory the GPU maps, so the kernels
// write the result where the host reads it, and no copy back is queued.

#include "common/reduction/partial.h"

namespace gpureduce::runtime {

struct PartialSlot {
  gpureduce::Partial* device;  // the GPU's address of `host`
  gpureduce::Partial* host;
};

}  // namespace gpureduce::runtime
