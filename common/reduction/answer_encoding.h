#pragma once

// Many outputs' answers of one op written as a result array's elements (issue 23): for each
// output's Stats, the bytes FinalizeOp then EncodeResult give, bit for bit, in a loop chosen once
// per op and dtype. A per-output StatusOr and the switches on the op and the result dtype cost as
// much as reducing a row of 16 elements; the rare outputs they decide otherwise (empty ones,
// integer means, an arg op over all-NaN elements) still go through them.

#include <cstddef>
#include <cstdint>
#include <span>

#include "absl/status/status.h"
#include "common/reduction/dtype.h"
#include "common/reduction/op.h"
#include "common/reduction/stats.h"

namespace gpureduce {

struct EncodedAnswers {
  uint64_t overflows = 0;  // integer answers that wrapped around (OpResult::overflow)
  absl::Status status;     // FinalizeOp's refusal of the first output it refuses
  size_t failed = 0;       // that output's index in `stats`; the ones after it are not written
};

// Writes `op`'s answer over each of `stats` (of `input` elements, variance's `ddof`) as one
// element of ResultDType(op, input), one after another from `out`.
EncodedAnswers EncodeAnswers(Op op, DType input, double ddof, std::span<const Stats> stats,
                             std::byte* out);

}  // namespace gpureduce
