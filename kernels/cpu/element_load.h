#pragma once

// How the `cpu` kernel reads each dtype's little-endian elements: the stored type, the type its
// loops compute in, and the conversion between them. Branch-free selects only and no lookup
// table, so every loop that loads elements vectorizes.

#include <bit>
#include <cstdint>

#include "common/reduction/dtype.h"
#include "kernels/cpu/block_reduce.h"

// In the passes' namespace: each instruction set's copy of these inline functions stays its own
// (one shared name would let the linker keep the AVX2 copy for the baseline passes).
namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {

// IEEE binary16 bits to float: the exponent and mantissa moved into float's fields and scaled
// by 2^(127 - 15) (which also makes binary16's subnormals float's normals); an all-ones exponent
// is infinity or NaN (its mantissa kept), the sign OR'd back.
inline float HalfToFloat(uint16_t h) {
  const uint32_t bits = h;
  const uint32_t magnitude = (bits & 0x7fffu) << 13;
  const uint32_t sign = (bits & 0x8000u) << 16;
  const uint32_t scaled = std::bit_cast<uint32_t>(std::bit_cast<float>(magnitude) * 0x1p112f);
  // A mask rather than a select: GCC turns the select into a branch, which stops vectorizing.
  const uint32_t special = 0u - static_cast<uint32_t>((bits & 0x7c00u) == 0x7c00u);
  return std::bit_cast<float>((special & (magnitude | 0x7f800000u)) | (~special & scaled) | sign);
}

// bfloat16 is the upper half of a float32.
inline float BFloat16ToFloat(uint16_t h) { return std::bit_cast<float>(uint32_t{h} << 16); }

// Storage: the element as stored; Value: what the loops compare and accumulate it as (exact).
template <DType kDType>
struct Element;

template <>
struct Element<DType::kFloat32> {
  using Storage = float;
  using Value = float;
  static Value Load(Storage x) { return x; }
};
template <>
struct Element<DType::kFloat16> {
  using Storage = uint16_t;
  using Value = float;
  static Value Load(Storage x) { return HalfToFloat(x); }
};
template <>
struct Element<DType::kBFloat16> {
  using Storage = uint16_t;
  using Value = float;
  static Value Load(Storage x) { return BFloat16ToFloat(x); }
};
template <>
struct Element<DType::kFloat64> {
  using Storage = double;
  using Value = double;
  static Value Load(Storage x) { return x; }
};
template <>
struct Element<DType::kInt32> {
  using Storage = int32_t;
  using Value = int32_t;
  static Value Load(Storage x) { return x; }
};
template <>
struct Element<DType::kInt64> {
  using Storage = int64_t;
  using Value = int64_t;
  static Value Load(Storage x) { return x; }
};

// Calls fn.template operator()<kDType>() with the dtype the passes reduce `dtype` as: itself, or
// float32 for float16 and bfloat16, which ReduceBlock widens to float32 before any pass runs.
template <typename FnT>
decltype(auto) DispatchPassDType(DType dtype, FnT&& fn) {
  switch (dtype) {
    case DType::kFloat64:
      return fn.template operator()<DType::kFloat64>();
    case DType::kInt32:
      return fn.template operator()<DType::kInt32>();
    case DType::kInt64:
      return fn.template operator()<DType::kInt64>();
    default:
      return fn.template operator()<DType::kFloat32>();
  }
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES
