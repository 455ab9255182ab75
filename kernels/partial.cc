#include "kernels/partial.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace gpureduce::kernels {
namespace {

// True when `candidate` (a later element) should replace `best` for MIN/ARGMIN (`less`) or
// MAX/ARGMAX. The first NaN wins and stays; among numbers only a strict improvement replaces.
bool Replaces(double best, double candidate, bool less) {
  if (std::isnan(best)) return false;
  if (std::isnan(candidate)) return true;
  return less ? candidate < best : candidate > best;
}

}  // namespace

Partial Combine(Op op, const Partial& left, const Partial& right) {
  if (left.count == 0) return right;
  if (right.count == 0) return left;
  Partial out = left;
  out.count = left.count + right.count;
  switch (op) {
    case Op::kSum:
    case Op::kMean:
    case Op::kSumSquares:
      out.value = left.value + right.value;
      break;
    case Op::kProd:
      out.value = left.value * right.value;
      break;
    case Op::kMin:
    case Op::kArgMin:
    case Op::kMax:
    case Op::kArgMax:
      if (Replaces(left.value, right.value, op == Op::kMin || op == Op::kArgMin)) {
        out.value = right.value;
        out.index = right.index;
      }
      break;
  }
  return out;
}

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

}  // namespace gpureduce::kernels
