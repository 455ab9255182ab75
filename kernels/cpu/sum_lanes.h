#pragma once

// The sums pass's lanes (sum_pass.cc, and the short runs pass's, runs_pass.cc): the kLanes
// float64 accumulators as vectors of the instruction set's width, and the loads, masks, compares
// and rounded-once operations their loops are built of. Included by the passes only, in their
// namespace, so each instruction set's copy keeps its own.

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__AVX__)
#include <immintrin.h>
#endif

#include "kernels/cpu/block_reduce.h"
#include "kernels/cpu/element_load.h"

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {

// The kLanes float64 lanes as GCC vectors of the instruction set's width (wider ones are lowered
// lane by lane): the compiler keeps them in registers and vectorizes every step, where the same
// loop over scalar lanes stayed scalar. Vector v holds lanes [v * kWidth, (v + 1) * kWidth), so
// each lane's arithmetic is exactly the source's and every instruction set gives the same bits.
#if defined(__AVX512F__)
inline constexpr size_t kWidth = 8;
#elif defined(__AVX2__)
inline constexpr size_t kWidth = 4;
#else
inline constexpr size_t kWidth = 2;
#endif
inline constexpr size_t kVectors = kLanes / kWidth;
static_assert(kLanes == 8, "a group of 16-bit elements converts as one Floats8");
typedef double Lanes __attribute__((vector_size(kWidth * sizeof(double))));
typedef float FloatLanes __attribute__((vector_size(kWidth * sizeof(float))));
typedef int64_t Mask __attribute__((vector_size(kWidth * sizeof(double))));

// `a` where `valid`, else 0: a bitwise and, which vectorizes where GCC lowers a vector select.
__attribute__((always_inline)) inline double Keep(bool valid, double a) { return valid ? a : 0.0; }
__attribute__((always_inline)) inline Lanes Keep(const Mask& valid, const Lanes& a) {
  return reinterpret_cast<Lanes>(reinterpret_cast<Mask>(a) & valid);
}

// The first non-NaN element's offset, or size.
template <DType kDType>
size_t FirstValid(const typename Element<kDType>::Storage* data, size_t size) {
  using E = Element<kDType>;
  size_t i = 0;
  while (i < size && !(E::Load(data[i]) == E::Load(data[i]))) ++i;
  return i;
}

// run = the lesser (greater) of a and run lane by lane, run where either is NaN (minps's rule,
// so a NaN in a is skipped): the extremes of a run of groups in one instruction a group. (Out
// parameters: a 32-byte vector returned without AVX changes the ABI, which GCC warns of.)
__attribute__((always_inline)) inline void Least(const Floats8& a, Floats8& run) {
#if defined(__AVX__)
  run = reinterpret_cast<Floats8>(
      _mm256_min_ps(reinterpret_cast<__m256>(a), reinterpret_cast<__m256>(run)));
#else
  run = a < run ? a : run;
#endif
}
__attribute__((always_inline)) inline void Most(const Floats8& a, Floats8& run) {
#if defined(__AVX__)
  run = reinterpret_cast<Floats8>(
      _mm256_max_ps(reinterpret_cast<__m256>(a), reinterpret_cast<__m256>(run)));
#else
  run = a > run ? a : run;
#endif
}

// Elements a fused sums pass compares with the extremes before it tests the compares, as the
// extremes pass's runs (one core, 256 MiB, AVX2: the five-op request of bfloat16 at 6.0 GB/s
// testing every group of kLanes, 6.6 so; float16 and float64 the same).
inline constexpr size_t kExtremesRun = 32;
static_assert(kExtremesRun % kLanes == 0);

// The moments of a block from its shifted sums (shift = its first non-NaN element, so the sums
// of deviations stay small and s2 - s1^2/n cancels little): a single pass that matches a
// two-pass reference to ~1e-13 on data far from 0 (mean 1e6, std 1), where sum-of-squares fails.
inline void SetMoments(double shift, double s1, double s2, double valid, Stats& stats) {
  if (valid == 0) return;
  stats.mean = shift + s1 / valid;
  const double m2 = s2 - s1 * (s1 / valid);
  stats.m2 = m2 < 0 ? 0.0 : m2;  // rounding; NaN passes through
}

// int64 sums kept as their elements' signed high and unsigned low 32-bit halves' sums (exact in
// 64 bits each for 2^31 elements): the sum itself, 2^32 high + low.
__extension__ using Int128 = __int128;
inline Int128 FromHalves(int64_t high, int64_t low) { return (Int128{high} << 32) + low; }

// An exact integer sum into `stats`: int_sum wrapped as NumPy's, and the wraps' count.
inline void SetExactSum(Int128 exact, Stats& stats) {
  stats.int_sum = static_cast<int64_t>(static_cast<uint64_t>(exact));
  stats.int_sum_wraps = static_cast<int64_t>((exact - stats.int_sum) >> 64);
}

// The squared deviations from `mean` of `count` elements `stride` apart, NaN skipped, in order:
// the moments' m2 taken again about the mean where the squares about a shift (SetMoments')
// overflowed, float64's 1e200 and -1e200 giving inf - inf.
template <DType kDType>
double SquaredDeviations(const typename Element<kDType>::Storage* data, size_t stride, size_t count,
                         double mean) {
  double m2 = 0;
  for (size_t k = 0; k < count; ++k) {
    const double d = static_cast<double>(Element<kDType>::Load(data[k * stride])) - mean;
    m2 += d == d ? d * d : 0.0;
  }
  return m2;
}

// Which extremes a fused sums pass gathers (min/max fields, first index from base_index).
struct ExtremesWanted {
  bool min = false;
  bool max = false;
  uint64_t base_index = 0;
};

// float32 lanes to float64 in one instruction: GCC 12 lowers the vector conversion to two
// 128-bit ones and a merge.
__attribute__((always_inline)) inline Lanes Widen(const FloatLanes& narrow) {
#if defined(__AVX512F__)
  // Zero-masked: GCC 12 warns of the unmasked form's undefined source (its own false positive),
  // and the vector conversion becomes two 256-bit ones.
  return reinterpret_cast<Lanes>(_mm512_maskz_cvtps_pd(0xff, reinterpret_cast<__m256>(narrow)));
#elif defined(__AVX__)
  const __m256d wide = _mm256_cvtps_pd(reinterpret_cast<__m128>(narrow));
  return reinterpret_cast<Lanes>(wide);
#else
  return __builtin_convertvector(narrow, Lanes);
#endif
}

// int32 and int64 lanes widened (IntSums; at 512 bits zero-masked, as Widen): one instruction each
// where the instruction set has one, where GCC 12 converts the vectors in halves and merges them
// (int32 SUM in L2, one core, AVX2: 14 G elements/s so, 8 by the vector conversion).
typedef int32_t Int32Lanes __attribute__((vector_size(kWidth * sizeof(int32_t))));
__attribute__((always_inline)) inline Mask ToInt64(const Int32Lanes& x) {
#if defined(__AVX512F__)
  return reinterpret_cast<Mask>(_mm512_maskz_cvtepi32_epi64(0xff, reinterpret_cast<__m256i>(x)));
#elif defined(__AVX2__)
  return reinterpret_cast<Mask>(_mm256_cvtepi32_epi64(reinterpret_cast<__m128i>(x)));
#else
  return __builtin_convertvector(x, Mask);
#endif
}
__attribute__((always_inline)) inline Mask ToInt64(const Mask& x) { return x; }
__attribute__((always_inline)) inline Lanes ToDouble(const Int32Lanes& x) {
#if defined(__AVX512F__)
  return reinterpret_cast<Lanes>(_mm512_maskz_cvtepi32_pd(0xff, reinterpret_cast<__m256i>(x)));
#elif defined(__AVX__)
  return reinterpret_cast<Lanes>(_mm256_cvtepi32_pd(reinterpret_cast<__m128i>(x)));
#else
  return __builtin_convertvector(x, Lanes);
#endif
}
__attribute__((always_inline)) inline Lanes ToDouble(const Mask& x) {
#if defined(__AVX512DQ__)
  return reinterpret_cast<Lanes>(_mm512_maskz_cvtepi64_pd(0xff, reinterpret_cast<__m512i>(x)));
#elif defined(__AVX2__)
  // No instruction before AVX-512: the high half times 2^32 plus the low half (under 2^52's
  // exponent, less 2^52), both exact, so the FMA rounds x once, as the scalar conversion does.
  const __m256i bits = reinterpret_cast<__m256i>(x);
  const __m256i low = _mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi64x(0xffffffff)),
                                      _mm256_set1_epi64x(0x4330000000000000));
  const __m128i high = _mm256_castsi256_si128(
      _mm256_permutevar8x32_epi32(bits, _mm256_setr_epi32(1, 3, 5, 7, 1, 3, 5, 7)));
  return reinterpret_cast<Lanes>(
      _mm256_fmadd_pd(_mm256_cvtepi32_pd(high), _mm256_set1_pd(0x1p32),
                      _mm256_sub_pd(_mm256_castsi256_pd(low), _mm256_set1_pd(0x1p52))));
#else
  return __builtin_convertvector(x, Lanes);
#endif
}

// Vector v of a group of kLanes elements (`group` holds them as float32 for 16-bit dtypes,
// converted once for the whole group).
template <DType kDType>
__attribute__((always_inline)) inline void LoadLanes(const typename Element<kDType>::Storage* data,
                                                     [[maybe_unused]] const Floats8& group,
                                                     [[maybe_unused]] const Floats4* halves,
                                                     size_t v, Lanes& out) {
  if constexpr (kDType == DType::kFloat64) {
    std::memcpy(&out, data + v * kWidth, sizeof(out));
  } else {
    FloatLanes narrow;
    if constexpr (kDType == DType::kFloat32) {
      std::memcpy(&narrow, data + v * kWidth, sizeof(narrow));
    } else {
      // By the preprocessor, not `if constexpr`: kWidth does not depend on kDType, so Clang
      // checks the other width's assignment too, and its vector types do not match.
#if defined(__AVX512F__)
      narrow = group;
#elif defined(__AVX2__)
      narrow = halves[v];
#else
      narrow = v == 0   ? __builtin_shufflevector(group, group, 0, 1)
               : v == 1 ? __builtin_shufflevector(group, group, 2, 3)
               : v == 2 ? __builtin_shufflevector(group, group, 4, 5)
                        : __builtin_shufflevector(group, group, 6, 7);
#endif
    }
    out = Widen(narrow);
  }
}

// x - shift, rounded once. With FMA, as x * 1 - shift: the same rounding of the same exact value,
// on the multiply pipes, which leaves the add pipes to the sums (AMD's Zen issues adds on two
// pipes and multiplies and FMAs on two others). One core, 256 MiB, the 2-core AMD VM: VAR of
// float16 11.3 -> 12.8 GB/s, the five-op request of float32 18.5 -> 21.3, bfloat16 8.4 -> 9.2.
__attribute__((always_inline)) inline double Deviation(double x, double shift) { return x - shift; }
__attribute__((always_inline)) inline Lanes Deviation(const Lanes& x, double shift) {
#if defined(__AVX512F__)
  return reinterpret_cast<Lanes>(
      _mm512_fmsub_pd(reinterpret_cast<__m512d>(x), _mm512_set1_pd(1.0), _mm512_set1_pd(shift)));
#elif defined(__FMA__)
  return reinterpret_cast<Lanes>(
      _mm256_fmsub_pd(reinterpret_cast<__m256d>(x), _mm256_set1_pd(1.0), _mm256_set1_pd(shift)));
#else
  return x - shift;
#endif
}

// a + b, rounded once; with FMA as b * 1 + a (the same rounding), on the multiply pipes, which
// leaves the add pipes to the conversions, the extremes and the other sums.
__attribute__((always_inline)) inline double AddByFma(double a, double b) { return a + b; }
__attribute__((always_inline)) inline Lanes AddByFma(const Lanes& a, const Lanes& b) {
#if defined(__AVX512F__)
  return reinterpret_cast<Lanes>(_mm512_fmadd_pd(reinterpret_cast<__m512d>(b), _mm512_set1_pd(1.0),
                                                 reinterpret_cast<__m512d>(a)));
#elif defined(__FMA__)
  return reinterpret_cast<Lanes>(_mm256_fmadd_pd(reinterpret_cast<__m256d>(b), _mm256_set1_pd(1.0),
                                                 reinterpret_cast<__m256d>(a)));
#else
  return a + b;
#endif
}

// The moments' sum of deviations: by FMA at 256 bits (the float16 VAR request 12.8 -> 13.8 GB/s
// so, one core, the AMD VM), by the add at 512 bits, where one register holds every lane and the
// loop would wait on the FMA's latency (VAR in L2: 7.5 -> 13.5 G elements/s so).
__attribute__((always_inline)) inline double AddOnMultiplyPipe(double a, double b) { return a + b; }
__attribute__((always_inline)) inline Lanes AddOnMultiplyPipe(const Lanes& a, const Lanes& b) {
#if defined(__AVX512F__)
  return a + b;
#else
  return AddByFma(a, b);
#endif
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES
