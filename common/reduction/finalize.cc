#include "common/reduction/finalize.h"

#include "absl/strings/str_cat.h"
#include "common/reduction/op_name.h"

namespace gpureduce {

absl::StatusOr<ReduceResult> Finalize(Op op, const Partial& partial) {
  ReduceResult result;
  result.count = partial.count;
  if (partial.count == 0) {
    if (op == Op::kSum) return result;
    if (op == Op::kProd) {
      result.value = 1.0;
      return result;
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "empty input: ", OpName(op),
        " has no identity; send at least one element (only sum and prod accept empty input)"));
  }
  result.value = partial.value;
  if (op == Op::kMean) result.value = partial.value / static_cast<double>(partial.count);
  if (OpReturnsIndex(op)) result.index = partial.index;
  return result;
}

}  // namespace gpureduce
