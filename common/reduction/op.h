#pragma once

// The reduction operations and the facts about them every backend shares. Plain C++ with no
// dependencies, so CUDA sources include it too (names live in op_name.h).

namespace gpureduce {

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

// SUM (0) and PROD (1) are defined on empty input; every other op rejects it.
constexpr bool OpHasIdentity(Op op) { return op == Op::kSum || op == Op::kProd; }

// ARGMIN and ARGMAX report an index; the others report -1.
constexpr bool OpReturnsIndex(Op op) { return op == Op::kArgMin || op == Op::kArgMax; }

}  // namespace gpureduce
