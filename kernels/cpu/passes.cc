// This instruction set's table of passes (block_reduce.h), and the widening of 16-bit floats.

#include <cstddef>
#include <cstdint>

#if defined(__F16C__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "kernels/cpu/block_reduce.h"
#include "kernels/cpu/element_load.h"

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {
namespace {

// A loop that does nothing else vectorizes; inside the passes' loops the conversion did not.
void Widen(bool half, const uint16_t* in, size_t size, float* out) {
  if (half) {
    size_t i = 0;
#if defined(__AVX512F__)
    // 16 at a time where the copy has 512-bit registers (float16 columns, 16 threads of the H200
    // host: 0.94-1.43x in one call, 0.98-1.10x in another).
    for (; i + 16 <= size; i += 16) {
      const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
      // (Masked: GCC 12's unmasked form warns of an undefined operand.)
      _mm512_storeu_ps(out + i, _mm512_maskz_cvtph_ps(0xffff, bits));
    }
#endif
#if defined(__F16C__)
    // The instruction itself (exact, as HalfToFloat): 8 a cycle against 8 in several.
    for (; i + 8 <= size; i += 8) {
      const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
      _mm256_storeu_ps(out + i, _mm256_cvtph_ps(bits));
    }
#endif
    for (; i < size; ++i) out[i] = HalfToFloat(in[i]);
  } else {
    for (size_t i = 0; i < size; ++i) out[i] = BFloat16ToFloat(in[i]);
  }
}

#if defined(__AVX512F__)
// The sums of 8-byte elements without the extremes (SUM, VAR of float64 and int64) by the AVX2
// copy on AMD's CPUs: twice as fast in L2 at 512 bits there, but slower from memory (one core of
// the AMD VM, 256 MiB: float64 SUM 24.0 -> 19.7 GB/s, VAR 30.4 -> 21.9, int64 SUM 27.0 -> 21.3).
// Intel's (the GPU host's Xeon) run the AVX-512 copy faster everywhere (16 threads, 256 MiB:
// float64 SUM 68-79 -> 86-88 GB/s, int64 VAR 79-104 -> 118-137; one thread in L2: float64 SUM
// 13.7 -> 24.0). The same bits either way.
bool EightByteSumsAtHalfWidth() {
  static const bool amd = [] {
    __builtin_cpu_init();
    return __builtin_cpu_is("amd") != 0;
  }();
  return amd;
}

void AddSumsChosen(DType dtype, const StatsNeeds& needs, bool fuse_extremes, const std::byte* data,
                   size_t size, uint64_t base_index, Stats& stats) {
  const bool extremes = fuse_extremes && (needs.min || needs.max);
  const bool half_width = DTypeSize(dtype) == 8 && !extremes && EightByteSumsAtHalfWidth();
  const auto add_sums = half_width ? avx2::kPasses.add_sums : AddSums;
  add_sums(dtype, needs, fuse_extremes, data, size, base_index, stats);
}
#endif

}  // namespace

#if defined(__AVX512F__)
// The AVX2 copy's extremes pass: its 256-bit compares go to mask registers here, and each run's
// test back to vectors, which cost a MIN request of float32 in L2 15 -> 13 G elements/s (one
// core of the AMD VM); its loop is no wider at 512 bits (element_load.h converts 8 at a time).
const Passes kPasses = {AddSumsChosen, avx2::AddExtremes, AddProduct, Widen,
                        AddColumns,    AddRuns,           AnswerRuns};
#else
const Passes kPasses = {AddSums, AddExtremes, AddProduct, Widen, AddColumns, AddRuns, AnswerRuns};
#endif

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES
