#pragma once

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "common/reduction/dtype.h"
#include "common/reduction/op.h"

namespace gpureduce {

// Lower-case name as the CLI spells it: "sum", "prod", ..., "sum_squares", "argmin".
absl::string_view OpName(Op op);

// Parses OpName's spelling, case-insensitively; also accepts the proto's upper-case names.
std::optional<Op> ParseOp(absl::string_view name);

// NumPy's name of a dtype: "float32", "float16", "bfloat16" (PyTorch's), "float64", "int32",
// "int64".
absl::string_view DTypeName(DType dtype);
// Parses DTypeName's spelling, case-insensitively.
std::optional<DType> ParseDType(absl::string_view name);
// "float32, float16, ...": the choices, for messages.
std::string DTypeNames();

}  // namespace gpureduce
