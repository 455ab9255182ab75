// This instruction set's table of passes (block_reduce.h), and the widening of 16-bit floats.

#include <cstddef>
#include <cstdint>

#if defined(__F16C__)
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

}  // namespace

#if defined(__AVX512F__)
// The AVX2 copy's extremes pass: its 256-bit compares go to mask registers here, and each run's
// test back to vectors, which cost a MIN request of float32 in L2 15 -> 13 G elements/s (one
// core of the AMD VM); its loop is no wider at 512 bits (element_load.h converts 8 at a time).
const Passes kPasses = {AddSums, avx2::AddExtremes, AddProduct, Widen};
#else
const Passes kPasses = {AddSums, AddExtremes, AddProduct, Widen};
#endif

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES
