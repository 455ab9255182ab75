#pragma once

// `--op` and `--dtype` of gpureduce and gpureduce-load: one op or a comma list of them (one
// request, one result per op), and the input's element type.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/reduction/dtype.h"
#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::cli {

// "{sum|prod|...|nanstd}".
std::string OpChoices();

// "sum", "argmin" or "sum,min,max" (each op at most once, in the order given; spaces around the
// commas are allowed). InvalidArgument naming the bad entry and the choices.
absl::StatusOr<std::vector<v1::Op>> ParseOpList(const std::string& text);

// "float16" (any case) -> DType; InvalidArgument naming the text and the choices.
absl::StatusOr<DType> ParseDTypeFlag(const std::string& text);

}  // namespace gpureduce::cli
