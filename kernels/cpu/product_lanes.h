#pragma once

// The float product's arithmetic, shared by the product pass (prod_pass.cc, a block's lanes) and
// the columns pass (column_pass.cc, a tile's columns): each lane or column keeps its product as a
// mantissa and a binary exponent apart, renormalized often enough that no partial product
// overflows or underflows (so [0] + [1e30] * 200 is 0 and [2] * 2000 + [0] is 0, as the exact
// product is). Written once for scalars and once for sum_lanes.h's vectors, lane by lane the same
// operations, so that every copy of the passes gives the same bits. Included by the passes only,
// in their namespace.

#include <bit>
#include <cstddef>
#include <cstdint>

#include "kernels/cpu/block_reduce.h"
#include "kernels/cpu/element_load.h"
#include "kernels/cpu/sum_lanes.h"

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {

// The factors a product in [0.5, 1) takes before it is renormalized. Elements of float32's range
// or less (float16, bfloat16, float32: |x| in [2^-149, 2^128]) multiply in as they are: 6 of them
// keep it a normal double (2^-895 .. 2^768). float64 elements are split into their own mantissa
// in [0.5, 1) first (SplitFactor), so 64 of them keep it >= 2^-64.
template <DType kDType>
inline constexpr size_t kProductFactors = kDType == DType::kFloat64 ? 64 : 6;

inline constexpr uint64_t kMantissaAndSign = 0x800fffffffffffffull;
inline constexpr uint64_t kHalfExponent = uint64_t{1022} << 52;  // [0.5, 1)'s biased exponent

// Moves the binary exponent of a normal `m` into `exponent`, leaving m in [0.5, 1) (frexp without
// the call or its branches). Zero, infinity and NaN stay as they are; the products never hold a
// subnormal.
__attribute__((always_inline)) inline void Normalize(double& m, int64_t& exponent) {
  const uint64_t bits = std::bit_cast<uint64_t>(m);
  const int64_t biased = static_cast<int64_t>((bits >> 52) & 0x7ff);
  const uint64_t special = uint64_t{0} - static_cast<uint64_t>((biased == 0) | (biased == 0x7ff));
  exponent += static_cast<int64_t>(static_cast<uint64_t>(biased - 1022) & ~special);
  const uint64_t normalized = (bits & kMantissaAndSign) | kHalfExponent;
  m = std::bit_cast<double>((bits & special) | (normalized & ~special));
}
__attribute__((always_inline)) inline void Normalize(Lanes& m, Mask& exponent) {
  const Mask bits = reinterpret_cast<Mask>(m);
  const Mask biased = (bits >> 52) & 0x7ff;
  const Mask special = (biased == 0) | (biased == 0x7ff);
  exponent += (biased - 1022) & ~special;
  const Mask normalized =
      (bits & static_cast<int64_t>(kMantissaAndSign)) | static_cast<int64_t>(kHalfExponent);
  m = reinterpret_cast<Lanes>((bits & special) | (normalized & ~special));
}

// A float64 factor as its own mantissa in [0.5, 1), its exponent into `exponent`: a subnormal
// scaled by 2^64 first (and zero with it, harmlessly).
__attribute__((always_inline)) inline void SplitFactor(double& x, int64_t& exponent) {
  const uint64_t tiny =
      uint64_t{0} - uint64_t{(std::bit_cast<uint64_t>(x) & 0x7ff0000000000000ull) == 0};
  const double scaled = x * 0x1p64;
  x = std::bit_cast<double>((std::bit_cast<uint64_t>(scaled) & tiny) |
                            (std::bit_cast<uint64_t>(x) & ~tiny));
  exponent -= static_cast<int64_t>(tiny & 64);
  Normalize(x, exponent);
}
__attribute__((always_inline)) inline void SplitFactor(Lanes& x, Mask& exponent) {
  const Mask bits = reinterpret_cast<Mask>(x);
  const Mask tiny = (bits & 0x7ff0000000000000ll) == 0;
  const Mask scaled = reinterpret_cast<Mask>(x * 0x1p64);
  x = reinterpret_cast<Lanes>((scaled & tiny) | (bits & ~tiny));
  exponent -= tiny & 64;
  Normalize(x, exponent);
}

// x, or 1 where x is NaN (the product skips NaN: NANPROD's, and PROD answers NaN from the count).
__attribute__((always_inline)) inline double OneIfNan(double x) {
  const uint64_t nan = uint64_t{0} - uint64_t{x != x};
  return std::bit_cast<double>((std::bit_cast<uint64_t>(x) & ~nan) |
                               (std::bit_cast<uint64_t>(1.0) & nan));
}
__attribute__((always_inline)) inline Lanes OneIfNan(const Lanes& x, const Mask& nan) {
  const Mask one = reinterpret_cast<Mask>(Lanes{} + 1.0);
  return reinterpret_cast<Lanes>((reinterpret_cast<Mask>(x) & ~nan) | (one & nan));
}

// A float element of kDType (widened to double) multiplied into a product: NaN as 1, float64's
// split first.
template <DType kDType>
__attribute__((always_inline)) inline void MultiplyFactor(double x, double& m, int64_t& exponent) {
  x = OneIfNan(x);
  if constexpr (kDType == DType::kFloat64) SplitFactor(x, exponent);
  m *= x;
}

// A group of kLanes elements from `x` multiplied into kVectors vectors of lanes (element e into
// lane e): NaN counted in `nans` and skipped, 16-bit floats converted as they load.
template <DType kDType>
__attribute__((always_inline)) inline void MultiplyGroup(const typename Element<kDType>::Storage* x,
                                                         Lanes* prod, Mask* exponent, Mask* nans) {
  Floats8 group{};  // float64 loads none
  Floats4 halves[2];
  if constexpr (sizeof(typename Element<kDType>::Storage) == 2 && kWidth == 4) {
    LoadFloatHalves<kDType>(x, halves[0], halves[1]);
  } else if constexpr (kDType != DType::kFloat64) {
    LoadFloats<kDType>(x, group);
  }
  for (size_t v = 0; v < kVectors; ++v) {
    Lanes lane;
    LoadLanes<kDType>(x, group, halves, v, lane);
    const Mask nan = lane != lane;
    nans[v] -= nan;
    lane = OneIfNan(lane, nan);
    if constexpr (kDType == DType::kFloat64) SplitFactor(lane, exponent[v]);
    prod[v] *= lane;
  }
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES
