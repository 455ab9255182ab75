#pragma once

// The float product's arithmetic, shared by the product pass (prod_pass.cc, a block's lanes) and
// the columns pass (column_pass.cc, a tile's columns): each lane or column keeps its product as a
// mantissa and a binary exponent apart, renormalized often enough that no partial product
// overflows or underflows (so [0] + [1e30] * 200 is 0 and [2] * 2000 + [0] is 0, as the exact
// product is). Written once for scalars and once for sum_lanes.h's vectors, lane by lane the same
// operations, so that every copy of the passes gives the same bits. Included by the passes only,
// in their namespace.

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>

#include "common/reduction/int_product.h"
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
// lane e): NaN counted in `nans` and skipped, 16-bit floats converted as they load. kNanFree: no
// NaN counted or skipped (a NaN makes the lane's product NaN; the caller then goes again counting
// it), the same bits otherwise.
template <DType kDType, bool kNanFree = false>
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
    if constexpr (!kNanFree) {
      const Mask nan = lane != lane;
      nans[v] -= nan;
      lane = OneIfNan(lane, nan);
    }
    if constexpr (kDType == DType::kFloat64) SplitFactor(lane, exponent[v]);
    prod[v] *= lane;
  }
}

// Integers: NumPy's product wrapped modulo 2^64, beside the exact product's magnitude kept as the
// floats' are (each factor's |x| rounded to a double: >= 1 unless 0, so it never underflows, and
// six of at most 2^63 keep a product in [0.5, 1) normal). The magnitude tells whether the exact
// product left int64 (LeavesInt64), where overflow-checked multiplies do not vectorize.
// (int32's converted to double from int32: that vectorizes at 256 bits, int64's does not.)
template <DType kDType>
__attribute__((always_inline)) inline void MultiplyIntFactor(int64_t x, uint64_t& wrapped,
                                                             double& magnitude) {
  wrapped *= static_cast<uint64_t>(x);
  if constexpr (kDType == DType::kInt32) {
    magnitude *= std::fabs(static_cast<double>(static_cast<int32_t>(x)));
  } else {
    magnitude *= std::fabs(static_cast<double>(x));
  }
}

typedef uint64_t UnsignedLanes __attribute__((vector_size(sizeof(Mask))));

// A group of kLanes integers from `x` (int32 or int64) multiplied into kVectors vectors of lanes.
template <DType kDType>
__attribute__((always_inline)) inline void MultiplyIntGroup(
    const typename Element<kDType>::Storage* x, Mask* wrapped, Lanes* magnitude) {
  const Mask kMagnitudeBits = Mask{} + 0x7fffffffffffffffll;
  for (size_t v = 0; v < kVectors; ++v) {
    Mask lane;
    Lanes value;
    if constexpr (kDType == DType::kInt32) {  // converted from int32: one instruction at 256 bits
      Int32Lanes narrow;
      std::memcpy(&narrow, x + v * kWidth, sizeof(narrow));
      lane = ToInt64(narrow);
      value = ToDouble(narrow);
    } else {
      std::memcpy(&lane, x + v * kWidth, sizeof(lane));
      value = ToDouble(lane);
    }
    // Unsigned, so the multiply wraps modulo 2^64 (a signed one's overflow is undefined).
    wrapped[v] = reinterpret_cast<Mask>(reinterpret_cast<UnsignedLanes>(wrapped[v]) *
                                        reinterpret_cast<UnsignedLanes>(lane));
    magnitude[v] *= reinterpret_cast<Lanes>(reinterpret_cast<Mask>(value) & kMagnitudeBits);
  }
}

// `count` lanes' products (each in [0.5, 1) or 0, inf, NaN; exponents apart) multiplied in lane
// order, renormalized after each: the product's mantissa, its exponent added into `exponent`.
inline double MultiplyInOrder(const double* prod, const int64_t* exponents, size_t count,
                              int64_t& exponent) {
  double total = 1.0;
  for (size_t lane = 0; lane < count; ++lane) {
    int own = 0;
    total = std::frexp(total * prod[lane], &own);
    exponent += own + exponents[lane];
  }
  return total;
}

// Whether the exact product of integers, whose magnitudes multiply to about magnitude *
// 2^exponent (within a relative n * 2^-53 for n factors), leaves int64's range, where the estimate
// tells: false below 2^62, true from 2^65, nullopt between (ExactProductRangeOf then decides).
// A zero factor (magnitude 0) leaves it never.
inline std::optional<bool> LeavesInt64(double magnitude, int64_t exponent) {
  if (magnitude == 0) return false;
  int own = 0;
  std::frexp(magnitude, &own);  // magnitude * 2^exponent in [2^(e - 1), 2^e)
  const int64_t e = exponent + own;
  if (e <= 62) return false;
  if (e >= 66) return true;
  return std::nullopt;
}

// The exact check, a factor at a time on magnitudes (no factor is 0 here, so they only grow) and
// the sign apart: -2^63 fits, +2^63 is int_product.h's state of its own (checked multiplies of
// the signed partial products would flag int64's least times -1 even where a later -1 brings it
// back). `count` integers `stride` elements apart.
template <typename StorageT>
IntProductRange ExactProductRangeOf(const StorageT* x, size_t stride, size_t count) {
  constexpr uint64_t kLeast = uint64_t{1} << 63;  // |INT64_MIN|
  uint64_t magnitude = 1;
  bool negative = false;
  IntProductRange range;
  for (size_t k = 0; k < count; ++k) {
    const auto factor = static_cast<int64_t>(x[k * stride]);
    negative ^= factor < 0;
    const uint64_t size = factor < 0 ? uint64_t{0} - static_cast<uint64_t>(factor) : factor;
    if (__builtin_mul_overflow(magnitude, size, &magnitude) || magnitude > kLeast) {
      range.leaves = true;
      return range;
    }
  }
  range.two_to_63 = magnitude == kLeast && !negative;
  return range;
}

// An integer product's Stats (the wrapped bits, the zero flag, the exact product's range) from
// its lanes' total magnitude * 2^exponent and, where that cannot tell, its `count` factors
// `stride` elements apart at x.
template <typename StorageT>
void SetIntProduct(uint64_t wrapped, double magnitude, int64_t exponent, const StorageT* x,
                   size_t stride, size_t count, Stats& out) {
  out.int_prod = wrapped;
  out.int_prod_zero = magnitude == 0;
  const std::optional<bool> leaves = LeavesInt64(magnitude, exponent);
  IntProductRange range;
  if (leaves) {
    range.leaves = *leaves;
  } else {
    range = ExactProductRangeOf(x, stride, count);
  }
  out.int_prod_overflow = range.leaves;
  out.int_prod_two_to_63 = range.two_to_63;
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES
