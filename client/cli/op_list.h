#pragma once

// `gpureduce reduce --op`: one op, or a comma list of them run one after another on one input.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::cli {

// "{sum|prod|min|max|mean|sum_squares|argmin|argmax}".
std::string OpChoices();

// "sum", "argmin" or "sum,min,max" (each op at most once, in the order given; spaces around the
// commas are allowed). InvalidArgument naming the bad entry and the choices.
absl::StatusOr<std::vector<v1::Op>> ParseOpList(const std::string& text);

}  // namespace gpureduce::cli
