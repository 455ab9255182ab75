#include "client/cli/op_list.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/reduction/op_name.h"
#include "wire/op_mapping.h"

namespace gpureduce::cli {

std::string OpChoices() { return absl::StrCat("{", absl::StrJoin(wire::OpNames(), "|"), "}"); }

absl::StatusOr<std::vector<v1::Op>> ParseOpList(const std::string& text) {
  std::vector<v1::Op> ops;
  for (absl::string_view entry : absl::StrSplit(text, ',')) {
    const std::string name(absl::StripAsciiWhitespace(entry));
    const std::optional<v1::Op> op = wire::ParseOpName(name);
    if (!op.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--op: '", name, "' is not an op: expected one of ", OpChoices(),
                       " or a comma list of them (sum,min,max)"));
    }
    if (std::find(ops.begin(), ops.end(), *op) != ops.end()) {
      return absl::InvalidArgumentError(absl::StrCat("--op: ", name, " is listed twice"));
    }
    ops.push_back(*op);
  }
  return ops;
}

absl::StatusOr<DType> ParseDTypeFlag(const std::string& text) {
  const std::optional<DType> dtype = ParseDType(absl::StripAsciiWhitespace(text));
  if (!dtype.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dtype: '", text, "' is not a dtype: expected one of ", DTypeNames()));
  }
  return *dtype;
}

}  // namespace gpureduce::cli
