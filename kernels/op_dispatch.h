#pragma once

// The op -> reduction choice, written once for every kernel family. DispatchOp turns the
// runtime Op into a Reduction type, and each family maps that type to its own accumulator
// (single_pass's accumulators, CUB's operators, the ladder's combine, the CPU's block loops), so
// instantiating a kernel per op needs no switch of its own. A new op that reduces like an
// existing one is one case below; one that needs a new kind of reduction adds the kind here and
// an accumulator in each family, which the compiler then asks for. Plain C++ with no
// dependencies, usable from host code that launches CUDA kernels, from device code (the CUDA
// sources compile with --expt-relaxed-constexpr) and from the CPU kernel.

#include "common/reduction/op.h"

namespace gpureduce::kernels {

// What a reduction does with the elements it reads.
enum class ReductionKind {
  kSum,         // adds them (or their squares) in the family's accumulation type
  kProduct,     // multiplies them
  kExtreme,     // keeps the first in extreme_order.h's order: MIN, MAX
  kArgExtreme,  // the same, with its index: ARGMIN, ARGMAX
};

// One op's reduction as a type, for template arguments and `if constexpr`.
template <ReductionKind kKindT, bool kSquaresT = false, bool kLessT = false>
struct Reduction {
  static constexpr ReductionKind kKind = kKindT;
  static constexpr bool kSquares = kSquaresT;  // kSum: adds x * x (SUM_SQUARES)
  static constexpr bool kLess = kLessT;        // kExtreme, kArgExtreme: the minimum, else maximum
};

using SumReduction = Reduction<ReductionKind::kSum>;
using SumSquaresReduction = Reduction<ReductionKind::kSum, true>;
using ProductReduction = Reduction<ReductionKind::kProduct>;
template <bool kLessT>
using ExtremeReduction = Reduction<ReductionKind::kExtreme, false, kLessT>;
template <bool kLessT>
using ArgExtremeReduction = Reduction<ReductionKind::kArgExtreme, false, kLessT>;

// Returns functor(R{}) for the Reduction R that `op` computes, converted to ResultT; `invalid`
// for a value outside the enum (a bad cast), which the kernels report rather than guess at.
// MEAN reduces as SUM: Finalize divides. Ops that share a Reduction share its instantiations.
template <typename ResultT, typename FunctorT>
constexpr ResultT DispatchOp(Op op, ResultT invalid, FunctorT&& functor) {
  switch (op) {
    case Op::kSum:
    case Op::kMean:
      return functor(SumReduction{});
    case Op::kSumSquares:
      return functor(SumSquaresReduction{});
    case Op::kProd:
      return functor(ProductReduction{});
    case Op::kMin:
      return functor(ExtremeReduction<true>{});
    case Op::kMax:
      return functor(ExtremeReduction<false>{});
    case Op::kArgMin:
      return functor(ArgExtremeReduction<true>{});
    case Op::kArgMax:
      return functor(ArgExtremeReduction<false>{});
    default:  // the array API's ops: only the cpu kernel runs them, through Stats
      break;
  }
  return invalid;
}

}  // namespace gpureduce::kernels
