#pragma once

// Eight float64 answers as 16-bit floats at once (the short runs pass's answers, runs_answers.cc):
// each rounded as EncodeAnswers's NarrowBits rounds one. Needs AVX-512. Included by the passes
// only, in their namespace.

#if defined(__AVX512F__)
#include <immintrin.h>

#include <cstddef>

#include "common/reduction/dtype.h"
#include "kernels/cpu/sum_lanes.h"

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {

// Eight float answers as float16 or bfloat16 elements, each rounded once from float64 to nearest
// even, as NarrowBits (EncodeAnswers's; a loop of it was 14% of rows of 16 float16 SUM): to
// float32 toward zero with the lowest bit set where that was inexact ("round to odd", which
// keeps a second rounding to nearest even, 13 or more bits shorter, from rounding twice), then
// to nearest even; NaN as the canonical one.
template <DType kResult>
inline void NarrowEight(const Lanes& values, std::byte* out) {
  const auto v = reinterpret_cast<__m512d>(values);
  const __m256 toward_zero = _mm512_mask_cvt_roundpd_ps(_mm256_setzero_ps(), 0xff, v,
                                                        _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __mmask8 inexact = _mm512_cmp_pd_mask(
      _mm512_mask_cvtps_pd(_mm512_setzero_pd(), 0xff, toward_zero), v, _CMP_NEQ_UQ);
  const __m256i bits = _mm256_castps_si256(toward_zero);
  const __m256i odd = _mm256_mask_or_epi32(bits, inexact, bits, _mm256_set1_epi32(1));
  const __mmask8 nan = _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q);
  __m128i narrow;
  if constexpr (kResult == DType::kFloat16) {
    narrow = _mm256_cvtps_ph(_mm256_castsi256_ps(odd), _MM_FROUND_TO_NEAREST_INT);
    narrow = _mm_mask_mov_epi16(narrow, nan, _mm_set1_epi16(0x7e00));
  } else {  // bfloat16: float32's upper half, rounded to nearest even by its lower half
    const __m256i lowest_kept = _mm256_and_si256(_mm256_srli_epi32(odd, 16), _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(odd, _mm256_set1_epi32(0x7fff)), lowest_kept), 16);
    narrow = _mm256_mask_cvtepi32_epi16(_mm_setzero_si128(), 0xff, rounded);
    narrow = _mm_mask_mov_epi16(narrow, nan, _mm_set1_epi16(0x7fc0));
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), narrow);
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES

#endif  // __AVX512F__
