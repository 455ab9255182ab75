#include "common/reduction/op_name.h"

#include "absl/strings/ascii.h"

namespace gpureduce {

absl::string_view OpName(Op op) {
  switch (op) {
    case Op::kSum:
      return "sum";
    case Op::kProd:
      return "prod";
    case Op::kMin:
      return "min";
    case Op::kMax:
      return "max";
    case Op::kMean:
      return "mean";
    case Op::kSumSquares:
      return "sum_squares";
    case Op::kArgMin:
      return "argmin";
    case Op::kArgMax:
      return "argmax";
  }
  return "unknown";
}

std::optional<Op> ParseOp(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  for (Op op : kAllOps) {
    if (OpName(op) == lower) return op;
  }
  return std::nullopt;
}

}  // namespace gpureduce
