#pragma once

#include <optional>

#include "absl/strings/string_view.h"
#include "common/reduction/op.h"

namespace gpureduce {

// Lower-case name as the CLI spells it: "sum", "prod", ..., "sum_squares", "argmin".
absl::string_view OpName(Op op);

// Parses OpName's spelling, case-insensitively; also accepts the proto's upper-case names.
std::optional<Op> ParseOp(absl::string_view name);

}  // namespace gpureduce
