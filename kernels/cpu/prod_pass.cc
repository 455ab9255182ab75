// The product pass (block_reduce.h). Floats: each lane keeps its product as a mantissa in
// [0.5, 1) and a binary exponent apart, renormalized often enough that no partial product
// overflows or underflows (so [0] + [1e30] * 200 is 0 and [2] * 2000 + [0] is 0, as the exact
// product is). Integers: NumPy's wrapped product, and whether the exact one left int64.

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels/cpu/block_reduce.h"
#include "kernels/cpu/element_load.h"

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {
namespace {

// Moves the binary exponent of a normal `m` into *exponent, leaving m in [0.5, 1) (frexp without
// the call or its branches). Zero, infinity and NaN stay as they are.
inline void Normalize(double& m, int64_t& exponent) {
  const uint64_t bits = std::bit_cast<uint64_t>(m);
  const int64_t biased = static_cast<int64_t>((bits >> 52) & 0x7ff);
  const bool special = biased == 0 || biased == 0x7ff;
  exponent += special ? 0 : biased - 1022;
  const uint64_t normalized = (bits & 0x800fffffffffffffull) | (uint64_t{1022} << 52);
  m = std::bit_cast<double>(special ? bits : normalized);
}

// Float elements of float64 magnitude (float16, bfloat16, float32): |x| in [2^-149, 2^128], so a
// lane in [0.5, 1) takes kFactors of them and stays a normal double (2^-895 .. 2^768).
// float64 elements: each one is split into its own mantissa and exponent first (a subnormal
// scaled by 2^64 to be normal), so a lane multiplies mantissas in [0.5, 1) only and may take
// kFactors of them before it must renormalize (>= 2^-kFactors).
template <DType kDType>
void FloatProduct(const typename Element<kDType>::Storage* data, size_t size, Stats& stats) {
  using E = Element<kDType>;
  constexpr bool kSplit = kDType == DType::kFloat64;
  constexpr size_t kFactors = kSplit ? 64 : 6;
  double prod[kLanes];
  int64_t exponent[kLanes] = {};
  for (double& p : prod) p = 1.0;
  const auto multiply = [&](size_t lane, double x) __attribute__((always_inline)) {
    x = x == x ? x : 1.0;  // NaN skipped: the NAN forms' product (PROD answers NaN from the count)
    if constexpr (kSplit) {
      const bool tiny = std::fabs(x) < DBL_MIN;
      x = tiny ? x * 0x1p64 : x;
      exponent[lane] -= tiny ? 64 : 0;
      Normalize(x, exponent[lane]);
    }
    prod[lane] *= x;
  };
  size_t i = 0;
  for (; i + kLanes * kFactors <= size; i += kLanes * kFactors) {
    for (size_t k = 0; k < kFactors; ++k) {
      for (size_t lane = 0; lane < kLanes; ++lane) {
        multiply(lane, E::Load(data[i + k * kLanes + lane]));
      }
    }
    for (size_t lane = 0; lane < kLanes; ++lane) Normalize(prod[lane], exponent[lane]);
  }
  for (; i < size; ++i) {
    multiply(0, E::Load(data[i]));
    Normalize(prod[0], exponent[0]);
  }

  double total = 1.0;
  int64_t total_exponent = 0;
  for (size_t lane = 0; lane < kLanes; ++lane) {
    int lane_exponent = 0;
    total = std::frexp(total * prod[lane], &lane_exponent);
    total_exponent += lane_exponent + exponent[lane];
  }
  stats.prod = total;
  stats.prod_exponent = total_exponent;
}

// Wrapping multiplication is associative, so lanes multiply to the sequential wrapped product;
// the exact product leaves int64 exactly when a partial one does, unless a factor is 0 (every
// other factor has magnitude >= 1, so partial products only grow).
template <DType kDType>
void IntProduct(const typename Element<kDType>::Storage* data, size_t size, Stats& stats) {
  constexpr size_t kIntLanes = 4;  // multiplies with an overflow check do not vectorize
  int64_t prod[kIntLanes] = {1, 1, 1, 1};
  bool overflow = false, zero = false;
  size_t i = 0;
  for (; i + kIntLanes <= size; i += kIntLanes) {
    for (size_t lane = 0; lane < kIntLanes; ++lane) {
      const int64_t x = data[i + lane];
      zero |= x == 0;
      overflow |= __builtin_mul_overflow(prod[lane], x, &prod[lane]);
    }
  }
  for (size_t lane = 0; i < size; ++i, ++lane) {
    zero |= data[i] == 0;
    overflow |= __builtin_mul_overflow(prod[lane], int64_t{data[i]}, &prod[lane]);
  }
  int64_t total = 1;
  for (int64_t lane_prod : prod) overflow |= __builtin_mul_overflow(total, lane_prod, &total);
  stats.int_prod = static_cast<uint64_t>(total);
  stats.int_prod_overflow = overflow;
  stats.int_prod_zero = zero;
}

}  // namespace

void AddProduct(DType dtype, const std::byte* data, size_t size, Stats& stats) {
  DispatchPassDType(dtype, [&]<DType kDType>() {
    const auto* elements = reinterpret_cast<const typename Element<kDType>::Storage*>(data);
    if constexpr (IsInteger(kDType)) {
      IntProduct<kDType>(elements, size, stats);
    } else {
      FloatProduct<kDType>(elements, size, stats);
    }
  });
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES
