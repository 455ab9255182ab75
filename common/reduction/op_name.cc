#include "common/reduction/op_name.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"

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
    case Op::kNanSum:
      return "nansum";
    case Op::kNanProd:
      return "nanprod";
    case Op::kNanMin:
      return "nanmin";
    case Op::kNanMax:
      return "nanmax";
    case Op::kNanMean:
      return "nanmean";
    case Op::kNanArgMin:
      return "nanargmin";
    case Op::kNanArgMax:
      return "nanargmax";
    case Op::kVar:
      return "var";
    case Op::kStd:
      return "std";
    case Op::kNanVar:
      return "nanvar";
    case Op::kNanStd:
      return "nanstd";
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

absl::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "float32";
    case DType::kFloat16:
      return "float16";
    case DType::kBFloat16:
      return "bfloat16";
    case DType::kFloat64:
      return "float64";
    case DType::kInt32:
      return "int32";
    case DType::kInt64:
      return "int64";
  }
  return "unknown";
}

std::optional<DType> ParseDType(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  for (DType dtype : kAllDTypes) {
    if (DTypeName(dtype) == lower) return dtype;
  }
  return std::nullopt;
}

std::string DTypeNames() {
  std::vector<std::string> names;
  for (DType dtype : kAllDTypes) names.emplace_back(DTypeName(dtype));
  return absl::StrJoin(names, ", ");
}

}  // namespace gpureduce
