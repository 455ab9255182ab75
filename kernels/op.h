#pragma once

// The reduction operations and the facts about them every backend shares.

#include <optional>
#include "absl/strings/string_view.h"

namespace gpureduce::kernels {

// Values match gpureduce.v1.Op so logs and the wire agree; the server still converts explicitly.
enum class Op : int {
  kSum = 1,
  kProd = 2,
  kMin = 3,
  kMax = 4,
  kMean = 5,
  kSumSquares = 6,
  kArgMin = 7,
  kArgMax = 8,
};

inline constexpr Op kAllOps[] = {Op::kSum,  Op::kProd,       Op::kMin,    Op::kMax,
                                 Op::kMean, Op::kSumSquares, Op::kArgMin, Op::kArgMax};

// Lower-case name as the CLI spells it: "sum", "prod", ..., "sum_squares", "argmin".
absl::string_view OpName(Op op);

// Parses OpName's spelling, case-insensitively; also accepts the proto's upper-case names.
std::optional<Op> ParseOp(absl::string_view name);

// SUM (0) and PROD (1) are defined on empty input; every other op rejects it.
bool OpHasIdentity(Op op);

// ARGMIN and ARGMAX report an index; the others report -1.
bool OpReturnsIndex(Op op);

}  // namespace gpureduce::kernels
