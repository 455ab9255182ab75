#include "client/cli/op_list.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace gpureduce::cli {
namespace {

constexpr const char* kOpNames[] = {"sum",  "prod",        "min",    "max",
                                    "mean", "sum_squares", "argmin", "argmax"};

}  // namespace

std::string OpChoices() { return absl::StrCat("{", absl::StrJoin(kOpNames, "|"), "}"); }

absl::StatusOr<std::vector<v1::Op>> ParseOpList(const std::string& text) {
  std::vector<v1::Op> ops;
  for (absl::string_view entry : absl::StrSplit(text, ',')) {
    const std::string name(absl::StripAsciiWhitespace(entry));
    const bool known =
        std::find(std::begin(kOpNames), std::end(kOpNames), name) != std::end(kOpNames);
    v1::Op op = v1::OP_UNSPECIFIED;
    if (!known || !v1::Op_Parse(absl::AsciiStrToUpper(name), &op)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--op: '", name, "' is not an op: expected one of ", OpChoices(),
                       " or a comma list of them (sum,min,max)"));
    }
    if (std::find(ops.begin(), ops.end(), op) != ops.end()) {
      return absl::InvalidArgumentError(absl::StrCat("--op: ", name, " is listed twice"));
    }
    ops.push_back(op);
  }
  return ops;
}

}  // namespace gpureduce::cli
