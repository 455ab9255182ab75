#pragma once

// PROD and NANPROD alone of integer runs answered eight runs at a time (the short runs pass's
// answer_runs, runs_answers.cc), with no Stats between: each run's lanes as RunIntProduct takes
// them (run_products.h), eight runs' lanes multiplied at once (combine_eight.h), the wrapped
// products stored as EncodeAnswers stores the Stats' int_prod (the same bits in any order: a
// product modulo 2^64), and the answers whose exact product left int64 counted into the op's
// `overflows` as EncodeAnswers counts them, by the magnitudes where they tell (LeavesInt64) and
// ExactProductRangeOf where they do not. Where the Stats answered them, a run of 16 int32 paid
// its Stats, a frexp and EncodeAnswers's switch. Needs AVX-512. Included by runs_answers.cc only,
// in its namespace.

#if defined(__AVX512F__)
#include <immintrin.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "kernels/cpu/combine_eight.h"
#include "kernels/cpu/eight_runs.h"
#include "kernels/cpu/product_lanes.h"
#include "kernels/cpu/run_products.h"
#include "kernels/reduce.h"

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {

// Whether eight runs of kGroups whole groups each keep their magnitudes as they are, no exponent
// apart: a run of n factors of at most 2^31 (int32) or 2^63 (int64) in magnitude, and at least 1
// but 0, multiplies to at most 2^(31 n) or 2^(63 n), a normal double for int32 runs of up to 32
// and int64 runs of up to 16 (2^992, 2^1008).
template <DType kDType, size_t kGroups>
inline constexpr bool kRawMagnitudes = kGroups > 0 &&
                                       kGroups* kLanes <= (kDType == DType::kInt32 ? 32 : 16);

// A run of kGroups whole groups' lanes with kRawMagnitudes: the wrapped products from the first
// group on (int32 pairs exact in 64 bits by vpmuldq first, a third of vpmullq's work) and the
// magnitudes as they are.
template <DType kDType, size_t kGroups>
__attribute__((always_inline)) inline void RawIntLanes(const typename Element<kDType>::Storage* x,
                                                       __m512d& wrapped, __m512d& magnitude) {
  __m512i w[kGroups];
  __m512d m[kGroups];
  for (size_t g = 0; g < kGroups; ++g) {
    if constexpr (kDType == DType::kInt32) {
      const __m256i group = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + g * kLanes));
      w[g] = _mm512_maskz_cvtepi32_epi64(0xff, group);  // maskz: see combine_eight.h
      m[g] = _mm512_abs_pd(_mm512_maskz_cvtepi32_pd(0xff, group));
    } else {
      w[g] = _mm512_loadu_si512(x + g * kLanes);
      m[g] = _mm512_abs_pd(_mm512_maskz_cvtepi64_pd(0xff, w[g]));
    }
  }
  // int32: each pair's exact product into its even group, then those (and an odd last group)
  // into w[0] by the 64-bit multiplies.
  if constexpr (kDType == DType::kInt32 && kGroups >= 2) {
    for (size_t g = 0; g + 1 < kGroups; g += 2) w[g] = _mm512_maskz_mul_epi32(0xff, w[g], w[g + 1]);
    for (size_t g = 2; g < kGroups; g += 2) w[0] = _mm512_mullo_epi64(w[0], w[g]);
  } else {
    for (size_t g = 1; g < kGroups; ++g) w[0] = _mm512_mullo_epi64(w[0], w[g]);
  }
  for (size_t g = 1; g < kGroups; ++g) m[0] = _mm512_mul_pd(m[0], m[g]);
  wrapped = _mm512_castsi512_pd(w[0]);
  magnitude = m[0];
}

// Eight runs' answers at out (int64 each); how many of them left int64 added into `overflows`.
// Without `has_counter`, false and nothing written where one of them did. kGroups as
// IntLanesOfRun's.
template <DType kDType, size_t kGroups>
__attribute__((always_inline)) inline bool AnswerEightIntProducts(
    const typename Element<kDType>::Storage* x, const uint64_t* bounds, uint64_t base,
    bool has_counter, uint64_t& overflows, std::byte* out) {
  constexpr bool kRaw = kRawMagnitudes<kDType, kGroups>;
  const auto multiply_wrapped = [](__m512d a, __m512d b) {
    return _mm512_castsi512_pd(_mm512_mullo_epi64(_mm512_castpd_si512(a), _mm512_castpd_si512(b)));
  };
  const auto multiply = [](__m512d a, __m512d b) { return _mm512_mul_pd(a, b); };
  const auto add = [](__m512d a, __m512d b) {
    return _mm512_castsi512_pd(_mm512_add_epi64(_mm512_castpd_si512(a), _mm512_castpd_si512(b)));
  };
  __m512d wrapped[kEightRuns], magnitude[kEightRuns], exponent[kEightRuns];
  EightRunsOf<kGroups, typename Element<kDType>::Storage>(x, bounds, base)
      .ForEach([&](size_t k, const auto* run, uint64_t length) __attribute__((always_inline)) {
        if constexpr (kRaw) {
          RawIntLanes<kDType, kGroups>(run, wrapped[k], magnitude[k]);
        } else {
          const RunIntProductLanes l = IntLanesOfRun<kDType, kGroups>(run, length);
          wrapped[k] = reinterpret_cast<__m512d>(l.wrapped[0]);
          magnitude[k] = reinterpret_cast<__m512d>(l.magnitude[0]);
          exponent[k] = reinterpret_cast<__m512d>(l.exponent[0]);
        }
      });
  const __m512d total = CombineEight(wrapped, multiply_wrapped);
  // Each run's magnitude m * 2^e (m in [2^-8, 1) from eight lanes in [0.5, 1), or 0; raw: e = 0
  // and m as it is) in [2^(top - 1), 2^top): LeavesInt64's test on `top`.
  const Mask bits = reinterpret_cast<Mask>(CombineEight(magnitude, multiply));
  Mask top = ((bits >> 52) & 0x7ff) - 1022;
  if constexpr (!kRaw) top += reinterpret_cast<Mask>(CombineEight(exponent, add));
  const Mask nonzero = (bits & 0x7fffffffffffffffll) != 0;
  const auto lanes = [](Mask m) {
    return _mm512_test_epi64_mask(reinterpret_cast<__m512i>(m), reinterpret_cast<__m512i>(m));
  };
  uint64_t leaving = static_cast<uint64_t>(__builtin_popcount(lanes(nonzero & (top >= 66))));
  const __mmask8 unsure = lanes(nonzero & (top > 62) & (top < 66));
  if (unsure != 0) {  // rare: within a few binades of 2^63
    for (size_t k = 0; k < kEightRuns; ++k) {
      if ((unsure >> k & 1) == 0) continue;
      const IntProductRange range =
          ExactProductRangeOf(x + (bounds[k] - base), 1, bounds[k + 1] - bounds[k]);
      leaving += range.leaves || range.two_to_63;
    }
  }
  if (leaving > 0 && !has_counter) return false;
  overflows += leaving;
  _mm512_storeu_si512(out, _mm512_castpd_si512(total));
  return true;
}

// How many of `runs` runs (from bounds[0] - base in `data`) were answered: every whole eight, or
// without an `overflows` counter those before the first eight one of whose products left int64.
template <DType kDType>
size_t AnswerIntProducts(const DirectAnswers& direct, uint64_t first, const std::byte* data,
                         const uint64_t* bounds, uint64_t base, size_t runs) {
  static_assert(kVectors == 1 && kLanes == kEightRuns, "a register holds a run's lanes");
  const auto* x = reinterpret_cast<const typename Element<kDType>::Storage*>(data);
  std::atomic<uint64_t>* const counter = direct.ops[0].overflows;
  std::byte* out = direct.ops[0].out + first * sizeof(int64_t);
  uint64_t overflows = 0;
  size_t r = 0;
  for (; r + kEightRuns <= runs; r += kEightRuns, out += kEightRuns * sizeof(int64_t)) {
    bool answered = false;
    WithGroups(SharedGroups(bounds + r), [&]<size_t kGroups>() {
      answered = AnswerEightIntProducts<kDType, kGroups>(x, bounds + r, base, counter != nullptr,
                                                         overflows, out);
    });
    if (!answered) break;
  }
  if (overflows > 0) counter->fetch_add(overflows, std::memory_order_relaxed);
  return r;
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES

#endif  // __AVX512F__
