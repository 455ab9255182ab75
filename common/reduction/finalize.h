#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "common/reduction/op.h"
#include "common/reduction/partial.h"

namespace gpureduce {

// The finished answer of a request.
struct ReduceResult {
  double value = 0.0;
  int64_t index = -1;
  uint64_t count = 0;
};

// Applies the op's last step (MEAN divides) and the empty-input rule: SUM is 0, PROD is 1,
// everything else is INVALID_ARGUMENT.
absl::StatusOr<ReduceResult> Finalize(Op op, const Partial& partial);

}  // namespace gpureduce
