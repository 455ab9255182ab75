#pragma once

// Each op's answer read out of a request's merged Stats, typed as NumPy types it
// (docs/array-api.md): the result dtype of each op for each input dtype, and the float result
// rounded once to it.

#include <cstdint>

#include "absl/status/statusor.h"
#include "common/reduction/dtype.h"
#include "common/reduction/op.h"
#include "common/reduction/stats.h"

namespace gpureduce {

struct OpResult {
  Op op = Op::kSum;
  DType dtype = DType::kFloat32;  // the result's type
  double value = 0.0;      // a float result rounded to `dtype`; an integer one's nearest double;
                           // an arg op's element
  double unrounded = 0.0;  // a float result before that rounding (float64)
  int64_t int_value = 0;   // an integer result, exact; an arg op's index
  int64_t index = -1;      // arg ops: the index; else -1
  bool overflow = false;   // an integer result that wrapped around (modulo 2^64)
  uint64_t count = 0;      // elements reduced (NaN included)
};

// NumPy's result type of `op` over elements of `input`: the sums and products of integers are
// int64, their means and moments float64, an arg op's answer int64; a float input keeps its type.
DType ResultDType(Op op, DType input);

// `value` rounded to the nearest `dtype` value (ties to even; past its range, an infinity). An
// integer dtype: `value` itself.
double RoundToDType(double value, DType dtype);

// The answer of `op` over a whole request of `input` elements, whose merged stats are `stats`
// (gathered with NeedsOf's needs for it). Empty input: SUM and PROD (and NAN forms) answer their
// identity, MEAN... as NumPy answers; INVALID_ARGUMENT where NumPy raises.
absl::StatusOr<OpResult> FinalizeOp(Op op, DType input, double ddof, const Stats& stats);

}  // namespace gpureduce
