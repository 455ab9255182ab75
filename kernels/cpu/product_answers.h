#pragma once

// PROD and NANPROD alone of float runs answered eight runs at a time (the short runs pass's
// answer_runs, runs_answers.cc), with no Stats between: each run's lanes as RunProduct takes them
// (run_products.h), eight runs' lanes multiplied at once in its order (combine_eight.h), then
// FloatProd's value (a multiply by 2^e, ldexp past a normal 2^e), or the lanes' product as it is
// where no partial product leaves the normal doubles (RawProductsFit), stored as EncodeAnswers
// stores it, so the bytes are EncodeAnswers's over RunProduct's Stats. Needs AVX-512. Included by
// runs_answers.cc only, in its namespace.

#if defined(__AVX512F__)
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "common/reduction/op_result.h"
#include "common/reduction/stats_values.h"
#include "kernels/cpu/combine_eight.h"
#include "kernels/cpu/eight_runs.h"
#include "kernels/cpu/narrow_eight.h"
#include "kernels/cpu/product_lanes.h"
#include "kernels/cpu/run_lanes.h"
#include "kernels/cpu/run_products.h"
#include "kernels/reduce.h"

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {

// Eight runs' answers of `op` at out, out + size, ...: kGroups and kNanFree as LanesOfRun's. With
// kNanFree, false where a run's product is NaN (a NaN element, or 0 times an infinity), nothing
// written: the caller goes again with the NaN counted.
// kRaw: the lanes multiply as they are, no exponent kept apart, where every partial product of a
// run stays a normal double (RawProductsFit): then each multiply rounds as the mantissas' do (a
// power of two apart) and the total is their value times 2^e, the same bits.
template <DType kDType, size_t kGroups, bool kNanFree, bool kRaw>
__attribute__((always_inline)) inline bool AnswerEightProducts(
    const typename Element<kDType>::Storage* x, const uint64_t* bounds, uint64_t base, Op op,
    std::byte* out) {
  const auto multiply = [](__m512d a, __m512d b) { return _mm512_mul_pd(a, b); };
  const auto add = [](__m512d a, __m512d b) {
    return _mm512_castsi512_pd(_mm512_add_epi64(_mm512_castpd_si512(a), _mm512_castpd_si512(b)));
  };
  __m512d prod[kEightRuns], exponent[kEightRuns], nans[kEightRuns];
  EightRunsOf<kGroups, typename Element<kDType>::Storage>(x, bounds, base)
      .ForEach([&](size_t k, const auto* run, uint64_t length) __attribute__((always_inline)) {
        const RunProductLanes l = LanesOfRun<kDType, kGroups, kNanFree, !kRaw>(run, length);
        prod[k] = reinterpret_cast<__m512d>(l.prod[0]);
        if constexpr (!kRaw) exponent[k] = reinterpret_cast<__m512d>(l.exponent[0]);
        if constexpr (!kNanFree) nans[k] = reinterpret_cast<__m512d>(l.nans[0]);
      });
  Lanes total = reinterpret_cast<Lanes>(CombineEight(prod, multiply));
  if constexpr (kNanFree) {
    if (_mm512_cmp_pd_mask(reinterpret_cast<__m512d>(total), reinterpret_cast<__m512d>(total),
                           _CMP_UNORD_Q) != 0) {
      return false;
    }
  }
  Lanes value = total;
  if constexpr (!kRaw) {
    Mask total_exponent = reinterpret_cast<Mask>(CombineEight(exponent, add));
    Normalize(total, total_exponent);
    // FloatProd: times 2^e where that is a normal double, else its ldexp, lane by lane.
    const Mask normal = (total_exponent >= -1022) & (total_exponent <= 1023);
    const Mask power = ((total_exponent + 1023) << 52) & normal;
    value = total * reinterpret_cast<Lanes>(power);
    if (AnyLane(~normal)) {
      for (size_t k = 0; k < kEightRuns; ++k) {
        if (normal[k]) continue;
        Stats stats;
        stats.prod = total[k];
        stats.prod_exponent = total_exponent[k];
        value[k] = FloatProd(stats);
      }
    }
  }
  if constexpr (!kNanFree) {
    if (!OpSkipsNan(op)) {
      const Mask nan_count = reinterpret_cast<Mask>(CombineEight(nans, add));
      const Lanes nan = Lanes{} + std::numeric_limits<double>::quiet_NaN();
      value = nan_count != 0 ? nan : value;
    }
  }
  if constexpr (kDType == DType::kFloat16 || kDType == DType::kBFloat16) {
    NarrowEight<kDType>(value, out);
  } else if constexpr (kDType == DType::kFloat32) {  // static_cast's rounding, lane by lane
    typedef float Floats __attribute__((vector_size(kEightRuns * sizeof(float))));
    const Floats narrow = __builtin_convertvector(value, Floats);
    std::memcpy(out, &narrow, sizeof(narrow));
  } else {
    std::memcpy(out, &value, sizeof(value));
  }
  return true;
}

// Whether eight runs of kGroups whole groups each, back to back from x, keep every partial
// product normal. float16's runs of up to 32 elements always: 11 significant bits and 2^-24 ..
// 2^16 a factor, so a lane's four are exact and any of a run's products within 2^-768 .. 2^512.
// float32's and bfloat16's (2^-149 .. 2^128) where every factor's binary exponent is within
// +-kWindow, 1023 / n - 1 for runs of n (no zero, subnormal, infinity or NaN): then any of n
// factors' products lies within 2^-1022 .. 2^1023. A compare of 16 or 32 factors' exponent bits
// at a time.
template <DType kDType, size_t kGroups>
__attribute__((always_inline)) inline bool RawProductsFit(
    const typename Element<kDType>::Storage* x) {
  if constexpr (kDType == DType::kFloat16) return kGroups > 0 && kGroups <= 4;
  if constexpr ((kDType == DType::kFloat32 || kDType == DType::kBFloat16) && kGroups > 0) {
    constexpr int kWindow = 1023 / static_cast<int>(kGroups * kLanes) - 1;
    constexpr bool kWide = kDType == DType::kFloat32;
    constexpr int kShift = kWide ? 23 : 7;  // the exponent field's
    constexpr size_t kBytes = kEightRuns * kGroups * kLanes * (kWide ? 4 : 2);
    static_assert(kBytes % 64 == 0, "whole vectors");
    const auto* bytes = reinterpret_cast<const char*>(x);
    bool fit = true;
#pragma GCC unroll 16
    for (size_t at = 0; at < kBytes; at += 64) {
      const __m512i bits = _mm512_loadu_si512(bytes + at);
      if constexpr (kWide) {
        const __m512i field = _mm512_and_si512(bits, _mm512_set1_epi32(0xff << kShift));
        const __m512i from = _mm512_sub_epi32(field, _mm512_set1_epi32((127 - kWindow) << kShift));
        fit &= _mm512_cmple_epu32_mask(from, _mm512_set1_epi32((2 * kWindow) << kShift)) == 0xffff;
      } else {
        const __m512i field = _mm512_and_si512(bits, _mm512_set1_epi16(0xff << kShift));
        const __m512i from = _mm512_sub_epi16(field, _mm512_set1_epi16((127 - kWindow) << kShift));
        fit &= _mm512_cmple_epu16_mask(from, _mm512_set1_epi16((2 * kWindow) << kShift)) ==
               0xffffffffu;
      }
    }
    return fit;
  }
  return false;
}

// How many of `runs` runs (from bounds[0] - base in `data`) were answered: every whole eight.
// Runs of a few whole groups each by copies of their own, and each eight first without counting
// NaN, again with it where a product is NaN (and the call's later runs with it at once, as
// runs_answers.cc's sums).
template <DType kDType>
size_t AnswerProducts(const DirectAnswers& direct, uint64_t first, const std::byte* data,
                      const uint64_t* bounds, uint64_t base, size_t runs) {
  static_assert(kVectors == 1 && kLanes == kEightRuns, "a register holds a run's lanes");
  const auto* x = reinterpret_cast<const typename Element<kDType>::Storage*>(data);
  const Op op = direct.ops[0].op;
  const size_t size = DTypeSize(ResultDType(op, kDType));
  std::byte* out = direct.ops[0].out + first * size;
  bool masked = false;
  size_t r = 0;
  for (; r + kEightRuns <= runs; r += kEightRuns, out += kEightRuns * size) {
    WithGroups(SharedGroups(bounds + r), [&]<size_t kGroups>() {
      const auto eight = [&]<bool kRaw>() {
        if (masked ||
            !AnswerEightProducts<kDType, kGroups, true, kRaw>(x, bounds + r, base, op, out)) {
          masked = true;
          AnswerEightProducts<kDType, kGroups, false, kRaw>(x, bounds + r, base, op, out);
        }
      };
      constexpr bool kMayBeRaw =
          kGroups > 0 && (kDType == DType::kFloat16 ? kGroups <= 4 : kDType != DType::kFloat64);
      if constexpr (kMayBeRaw) {
        if (RawProductsFit<kDType, kGroups>(x + (bounds[r] - base))) {
          return eight.template operator()<true>();
        }
      }
      eight.template operator()<false>();
    });
  }
  return r;
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES

#endif  // __AVX512F__
