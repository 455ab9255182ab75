#pragma once

// An op's answer as the element of a result array (issue 23): the little-endian bytes of its
// result dtype, as NumPy would store it.

#include <cstddef>

#include "common/reduction/op_result.h"

namespace gpureduce {

// Writes `result` (FinalizeOp's, whose value is already rounded to result.dtype) as one element
// of result.dtype: DTypeSize(result.dtype) bytes at `out`. An integer result writes int_value
// (wrapped as NumPy's); an arg op's, its index; a float NaN, the dtype's quiet NaN.
void EncodeResult(const OpResult& result, std::byte* out);

}  // namespace gpureduce
