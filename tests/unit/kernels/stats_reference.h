#pragma once

// The independent reference the array API's kernels are checked against: each op's answer over a
// TypedArray by plain sequential loops (long double for floats, __int128 for integer sums and
// products, two passes for VAR/STD), following NumPy's rules, with no code from kernels/ or from
// stats.cc / op_result.cc.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "common/reduction/dtype.h"
#include "common/reduction/op.h"
#include "common/reduction/op_result.h"
#include "tests/unit/kernels/typed_array.h"

namespace gpureduce::testing {

struct Expected {
  bool refused = false;           // FinalizeOp must answer INVALID_ARGUMENT
  DType dtype = DType::kFloat32;  // NumPy's result dtype
  bool integer = false;           // int_value and overflow are exact
  int64_t int_value = 0;
  bool overflow = false;
  int64_t index = -1;         // arg ops
  long double value = 0;      // the exact result before rounding to `dtype` (NaN, +-inf too)
  long double tolerance = 0;  // absolute, on `value`, before that rounding
};

// NumPy's result dtype, as a table written out here.
DType NumpyResultDType(Op op, DType input);

// `op` over `array` with `ddof` (VAR/STD). Relative tolerances: sums of float16/bfloat16/float32
// 1e-10 of sum(|x|) (float64 lanes), of float64 1e-13 (compensated); others in the .cc.
Expected ReferenceOf(Op op, const TypedArray& array, double ddof);

// "" when `result` is what `expected` says (value rounded once to the result dtype, within the
// tolerance plus one unit in its last place; exact where exact), else what differs.
std::string CheckResult(const Expected& expected, const absl::StatusOr<OpResult>& result);

}  // namespace gpureduce::testing
