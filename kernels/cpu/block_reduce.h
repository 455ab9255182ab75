#pragma once

// The CPU backend's kernel: one thread reduces one contiguous block in float64.

#include <cstdint>
#include <span>

#include "common/reduction/op.h"
#include "common/reduction/partial.h"

namespace gpureduce::kernels::cpu {

// Reduces `data` (elements base_index .. base_index + size - 1 of the whole array).
// Sums accumulate in float64 across several independent accumulators, so the compiler can
// vectorize without reassociating anything the source did not already reassociate.
Partial ReduceBlock(Op op, std::span<const float> data, uint64_t base_index);

}  // namespace gpureduce::kernels::cpu
