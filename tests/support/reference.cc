#include "tests/support/reference.h"

#include <cmath>
#include <sstream>

namespace gpureduce::testing {

using gpureduce::Op;

Reference ComputeReference(Op op, std::span<const float> data) {
  Reference ref;
  switch (op) {
    case Op::kSum:
    case Op::kMean:
      for (float x : data) {
        ref.value += x;
        ref.scale += std::fabs(static_cast<long double>(x));
      }
      if (op == Op::kMean) {
        ref.value /= data.size();
        ref.scale /= data.size();
      }
      break;
    case Op::kSumSquares:
      for (float x : data) ref.value += static_cast<long double>(x) * x;
      ref.scale = ref.value;
      break;
    case Op::kProd:
      ref.value = 1;
      for (float x : data) ref.value *= x;
      ref.scale = std::fabs(ref.value);
      break;
    case Op::kMin:
    case Op::kMax:
    case Op::kArgMin:
    case Op::kArgMax: {
      const bool less = op == Op::kMin || op == Op::kArgMin;
      for (size_t i = 0; i < data.size(); ++i) {
        const float x = data[i];
        if (std::isnan(x)) {  // NumPy: the first NaN is the answer
          ref.value = x;
          ref.index = static_cast<int64_t>(i);
          break;
        }
        if (i == 0 || (less ? x < ref.value : x > ref.value)) {
          ref.value = x;
          ref.index = static_cast<int64_t>(i);
        }
      }
      if (op == Op::kMin || op == Op::kMax) ref.index = -1;
      break;
    }
  }
  return ref;
}

std::string CheckAgainstReference(Op op, const Reference& ref, double value, int64_t index,
                                  double rel_tol) {
  std::ostringstream why;
  why.precision(17);
  const long double expected = ref.value;
  if (index != ref.index) {
    why << "index " << index << " != reference index " << ref.index << "; ";
  }
  if (std::isnan(expected) || std::isnan(value)) {
    if (std::isnan(expected) != std::isnan(value)) {
      why << "value " << value << " != reference " << static_cast<double>(expected);
    }
  } else if (std::isinf(expected) || std::isinf(value)) {
    if (static_cast<long double>(value) != expected) {
      why << "value " << value << " != reference " << static_cast<double>(expected);
    }
  } else {
    const bool exact = op == Op::kMin || op == Op::kMax || op == Op::kArgMin || op == Op::kArgMax;
    const long double error = std::fabs(static_cast<long double>(value) - expected);
    const long double allowed = exact ? 0 : rel_tol * ref.scale;
    if (error > allowed) {
      why << "value " << value << " differs from reference " << static_cast<double>(expected)
          << " by " << static_cast<double>(error) << " > allowed " << static_cast<double>(allowed)
          << " (" << rel_tol << " x scale " << static_cast<double>(ref.scale) << ")";
    }
  }
  return why.str();
}

}  // namespace gpureduce::testing
