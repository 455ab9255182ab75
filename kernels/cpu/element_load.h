#pragma once

// How the `cpu` kernel reads each dtype's little-endian elements: the stored type, the type its
// loops compute in, and the conversion between them. Branch-free selects only and no lookup
// table, so every loop that loads elements vectorizes.

#include <emmintrin.h>  // SSE2, which every x86-64 has

#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>
#if defined(__AVX__)
#include <immintrin.h>
#endif

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

// Vectors of N float32 (and of their bits) that LoadFloats fills.
typedef float Floats4 __attribute__((vector_size(16)));
typedef float Floats8 __attribute__((vector_size(32)));
typedef uint16_t Halves4 __attribute__((vector_size(8)));
typedef uint16_t Halves8 __attribute__((vector_size(16)));
typedef uint32_t Words4 __attribute__((vector_size(16)));
typedef uint32_t Words8 __attribute__((vector_size(32)));

// FloatsT's elements from consecutive elements of a float dtype of at most 32 bits, exactly as
// Element::Load converts each: the conversion inside a pass's loop, where the scalar Load does not
// vectorize. float16 with F16C's instruction where the build has it, else HalfToFloat's steps on
// whole vectors (the same values: both exact).
template <DType kDType, typename FloatsT>
__attribute__((always_inline)) inline void LoadFloats(const typename Element<kDType>::Storage* data,
                                                      FloatsT& out) {
  constexpr bool kEight = sizeof(FloatsT) == sizeof(Floats8);
  if constexpr (kDType == DType::kFloat32) {
    std::memcpy(&out, data, sizeof(out));
    return;
  }
#if defined(__F16C__)
  if constexpr (kDType == DType::kFloat16 && kEight) {
    const __m256 wide = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data)));
    std::memcpy(&out, &wide, sizeof(out));
    return;
  } else if constexpr (kDType == DType::kFloat16) {
    const __m128 wide = _mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(data)));
    std::memcpy(&out, &wide, sizeof(out));
    return;
  }
#endif
  if constexpr (kDType == DType::kBFloat16) {
#if defined(__AVX2__)
    if constexpr (kEight) {
      // A widening and a shift: one shuffle (Intel runs shuffles on one port) where the unpacks
      // and their join took three.
      const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data));
      const __m256i words = _mm256_slli_epi32(_mm256_cvtepu16_epi32(halves), 16);
      std::memcpy(&out, &words, sizeof(out));
      return;
    }
#endif
    // Each element under a zero half: two unpacks (SSE2, and the AVX2 copy's halves) where a
    // widening and a shift take four without SSE4.1.
    const __m128i zero = _mm_setzero_si128();
    if constexpr (kEight) {
      const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data));
      const __m128i low = _mm_unpacklo_epi16(zero, halves), high = _mm_unpackhi_epi16(zero, halves);
#if defined(__AVX__)
      const __m256i words = _mm256_set_m128i(high, low);  // in registers: through memory stalls
      std::memcpy(&out, &words, sizeof(out));
#else
      const __m128i words[2] = {low, high};
      std::memcpy(&out, words, sizeof(out));
#endif
    } else {
      const __m128i halves = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(data));
      const __m128i words = _mm_unpacklo_epi16(zero, halves);
      std::memcpy(&out, &words, sizeof(out));
    }
    return;
  }
  using Halves = std::conditional_t<kEight, Halves8, Halves4>;
  using Words = std::conditional_t<kEight, Words8, Words4>;
  Halves halves;
  std::memcpy(&halves, data, sizeof(halves));
  const Words bits = __builtin_convertvector(halves, Words);
  const Words magnitude = (bits & 0x7fffu) << 13;
  const Words sign = (bits & 0x8000u) << 16;
  const Words scaled = reinterpret_cast<Words>(reinterpret_cast<FloatsT>(magnitude) * 0x1p112f);
  const Words special = reinterpret_cast<Words>((bits & 0x7c00u) == 0x7c00u);
  const Words result = (special & (magnitude | 0x7f800000u)) | (~special & scaled) | sign;
  std::memcpy(&out, &result, sizeof(out));
}

// Eight consecutive 16-bit floats as two Floats4 (elements 0-3 and 4-7), as LoadFloats converts
// them: for a loop that widens each half to float64, where a Floats8 would be split again
// (bfloat16: one load and two unpacks; float16 with F16C: two 128-bit conversions).
template <DType kDType>
__attribute__((always_inline)) inline void LoadFloatHalves(const uint16_t* data, Floats4& low,
                                                           Floats4& high) {
  if constexpr (kDType == DType::kBFloat16) {
    const __m128i zero = _mm_setzero_si128();
    const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data));
    const __m128i words[2] = {_mm_unpacklo_epi16(zero, halves), _mm_unpackhi_epi16(zero, halves)};
    std::memcpy(&low, &words[0], sizeof(low));
    std::memcpy(&high, &words[1], sizeof(high));
  } else {
    LoadFloats<kDType>(data, low);
    LoadFloats<kDType>(data + 4, high);
  }
}

// Whether any lane of a vector compare's mask (16, 32 or 64 bytes) is set: one test instruction
// where the instruction set has one for that width.
template <typename MaskT>
__attribute__((always_inline)) inline bool AnyLane(const MaskT& mask) {
#if defined(__AVX512F__)
  if constexpr (sizeof(MaskT) == 64) {
    const auto bits = reinterpret_cast<__m512i>(mask);
    return _mm512_test_epi64_mask(bits, bits) != 0;
  }
#endif
#if defined(__AVX__)
  if constexpr (sizeof(MaskT) == 32) {
    const auto bits = reinterpret_cast<__m256i>(mask);
    return !_mm256_testz_si256(bits, bits);
  }
#endif
  uint64_t words[sizeof(MaskT) / 8];
  std::memcpy(words, &mask, sizeof(words));
  uint64_t any = 0;
  for (uint64_t word : words) any |= word;
  return any != 0;
}

// The bits of a 16-bit float dtype's infinity: a magnitude above them is a NaN.
template <DType kDType>
inline constexpr int16_t kInfinityBits = kDType == DType::kFloat16 ? 0x7c00 : 0x7f80;

// The offset of the first NaN among `size` float elements, or -1. 16-bit floats on their bits (a
// NaN's magnitude lies above its infinity's), in chunks tested whole first (a loop without an exit
// vectorizes), then the chunk that holds one element by element; the others element by element
// (chunked, float64 MIN with a NaN in 100,000 elements ran 12-20% slower on the GPU host's Xeon).
template <DType kDType>
int64_t FirstNanOf(const typename Element<kDType>::Storage* data, size_t size) {
  if constexpr (kDType == DType::kFloat16 || kDType == DType::kBFloat16) {
    constexpr uint16_t kInfinity = kInfinityBits<kDType>;
    constexpr size_t kChunk = 64;
    size_t i = 0;
    for (; i + kChunk <= size; i += kChunk) {
      bool any = false;
      for (size_t k = 0; k < kChunk; ++k) any |= (data[i + k] & 0x7fff) > kInfinity;
      if (any) break;
    }
    for (; i < size; ++i) {
      if ((data[i] & 0x7fff) > kInfinity) return static_cast<int64_t>(i);
    }
  } else {
    for (size_t i = 0; i < size; ++i) {
      if (!(data[i] == data[i])) return static_cast<int64_t>(i);
    }
  }
  return -1;
}

// Calls fn.template operator()<kDType>() with `dtype` as its template argument (the passes load
// 16-bit floats themselves and convert them in their loops).
template <typename FnT>
decltype(auto) DispatchLoadDType(DType dtype, FnT&& fn) {
  switch (dtype) {
    case DType::kFloat16:
      return fn.template operator()<DType::kFloat16>();
    case DType::kBFloat16:
      return fn.template operator()<DType::kBFloat16>();
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
