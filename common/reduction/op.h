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
  kNanSum = 9,
  kNanProd = 10,
  kNanMin = 11,
  kNanMax = 12,
  kNanMean = 13,
  kNanArgMin = 14,
  kNanArgMax = 15,
  kVar = 16,
  kStd = 17,
  kNanVar = 18,
  kNanStd = 19,
};

inline constexpr Op kAllOps[] = {Op::kSum,     Op::kProd,       Op::kMin,       Op::kMax,
                                 Op::kMean,    Op::kSumSquares, Op::kArgMin,    Op::kArgMax,
                                 Op::kNanSum,  Op::kNanProd,    Op::kNanMin,    Op::kNanMax,
                                 Op::kNanMean, Op::kNanArgMin,  Op::kNanArgMax, Op::kVar,
                                 Op::kStd,     Op::kNanVar,     Op::kNanStd};

// The ops every service version ran, on float32: what the GPU kernels and the ladder reduce.
inline constexpr Op kClassicOps[] = {Op::kSum,  Op::kProd,       Op::kMin,    Op::kMax,
                                     Op::kMean, Op::kSumSquares, Op::kArgMin, Op::kArgMax};
constexpr bool IsClassicOp(Op op) { return static_cast<int>(op) <= static_cast<int>(Op::kArgMax); }

// The NAN forms skip NaN elements (numpy.nansum and its family).
constexpr bool OpSkipsNan(Op op) {
  return op == Op::kNanSum || op == Op::kNanProd || op == Op::kNanMin || op == Op::kNanMax ||
         op == Op::kNanMean || op == Op::kNanArgMin || op == Op::kNanArgMax || op == Op::kNanVar ||
         op == Op::kNanStd;
}

// The op a NAN form skips NaNs of (NANSUM -> SUM); any other op is its own.
constexpr Op NanFormOf(Op op) {
  switch (op) {
    case Op::kNanSum:
      return Op::kSum;
    case Op::kNanProd:
      return Op::kProd;
    case Op::kNanMin:
      return Op::kMin;
    case Op::kNanMax:
      return Op::kMax;
    case Op::kNanMean:
      return Op::kMean;
    case Op::kNanArgMin:
      return Op::kArgMin;
    case Op::kNanArgMax:
      return Op::kArgMax;
    case Op::kNanVar:
      return Op::kVar;
    case Op::kNanStd:
      return Op::kStd;
    default:
      return op;
  }
}

// SUM and PROD (and their NAN forms) have an identity, 0 and 1; the empty input's other answers
// are Finalize's (NumPy's NaN for the moments, a refusal for the extremes).
constexpr bool OpHasIdentity(Op op) {
  const Op base = NanFormOf(op);
  return base == Op::kSum || base == Op::kProd;
}

// The arg ops report an index; the others report -1.
constexpr bool OpReturnsIndex(Op op) {
  const Op base = NanFormOf(op);
  return base == Op::kArgMin || base == Op::kArgMax;
}

}  // namespace gpureduce
