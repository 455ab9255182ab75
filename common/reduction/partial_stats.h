#pragma once

// The GPU's classic kernels (float32, one op of the first eight) reduce into a Partial; the
// runtime hands every request's answer on as Stats. This reads a Partial of `op` as the Stats
// fields that FinalizeOp reads for that op, and MergeStats merges in the same order Combine would.

#include "common/reduction/op.h"
#include "common/reduction/partial.h"
#include "common/reduction/stats.h"

namespace gpureduce {

Stats StatsFromPartial(Op op, const Partial& partial);

}  // namespace gpureduce
