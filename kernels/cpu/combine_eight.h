#pragma once

// Eight runs' kLanes lanes combined at once (the short runs pass's AVX-512 copy, runs_pass.cc):
// a transpose in three steps, each adding lanes kLanes / 2, then 2, then 1 apart, so lane r of the
// result is run r's lanes combined as the pass's scalar Total does, ((l0 + l4) + (l2 + l6)) +
// ((l1 + l5) + (l3 + l7)): the same additions of the same operands, so the same bits. Against
// a run at a time (each combined by extracts and scalar adds), it takes 3 steps of vector
// operations for eight runs. Needs AVX-512 (one register holds a run's lanes).

#if defined(__AVX512F__)
#include <immintrin.h>

#include <cstdint>

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {

// The shuffles and extremes below in their masked forms, every lane taken: GCC 12's unmasked ones
// pass an undefined vector that -Wuninitialized reports (GCC bug 105593).
template <int kImmediate>
__attribute__((always_inline)) inline __m512d ShuffleHalves(__m512d a, __m512d b) {
  return _mm512_mask_shuffle_f64x2(a, 0xff, a, b, kImmediate);
}

// v[r] holds run r's lanes; `op` combines two vectors lane by lane.
template <typename Op>
__attribute__((always_inline)) inline __m512d CombineEight(const __m512d* v, Op op) {
  // Each pair of runs: lanes 0-3 with 4-7, run 2k's in the low half, 2k + 1's in the high.
  __m512d quads[4];
  for (int k = 0; k < 4; ++k) {
    quads[k] = op(ShuffleHalves<0x44>(v[2 * k], v[2 * k + 1]),
                  ShuffleHalves<0xee>(v[2 * k], v[2 * k + 1]));
  }
  // Each run's four sums' first two with their last two: 128 bits a run, runs 0-3 then 4-7.
  __m512d pairs[2];
  for (int k = 0; k < 2; ++k) {
    pairs[k] = op(ShuffleHalves<0x88>(quads[2 * k], quads[2 * k + 1]),
                  ShuffleHalves<0xdd>(quads[2 * k], quads[2 * k + 1]));
  }
  // Each run's two: lane 2k is run k's total, lane 2k + 1 run k + 4's; then in run order.
  const __m512d totals = op(_mm512_mask_unpacklo_pd(pairs[0], 0xff, pairs[0], pairs[1]),
                            _mm512_mask_unpackhi_pd(pairs[0], 0xff, pairs[0], pairs[1]));
  return _mm512_mask_permutexvar_pd(totals, 0xff, _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7),
                                    totals);
}

// Eight runs' compensated lanes (hi + lo each) summed likewise: each addition's rounding error
// (TwoSum) added to the two operands' lo, (lo_a + lo_b) + error, as the scalar
// CompensatedTotal does. `lo_out` gets the totals' lo.
__attribute__((always_inline)) inline __m512d CompensatedSumEight(const __m512d* hi,
                                                                  const __m512d* lo,
                                                                  __m512d& lo_out) {
  const auto step = [](__m512d a, __m512d a_lo, __m512d b, __m512d b_lo, __m512d& sum_lo) {
    const __m512d sum = _mm512_add_pd(a, b);
    const __m512d b_part = _mm512_sub_pd(sum, a);
    const __m512d error =
        _mm512_add_pd(_mm512_sub_pd(a, _mm512_sub_pd(sum, b_part)), _mm512_sub_pd(b, b_part));
    sum_lo = _mm512_add_pd(_mm512_add_pd(a_lo, b_lo), error);
    return sum;
  };
  __m512d quads[4], quads_lo[4];
  for (int k = 0; k < 4; ++k) {
    quads[k] = step(ShuffleHalves<0x44>(hi[2 * k], hi[2 * k + 1]),
                    ShuffleHalves<0x44>(lo[2 * k], lo[2 * k + 1]),
                    ShuffleHalves<0xee>(hi[2 * k], hi[2 * k + 1]),
                    ShuffleHalves<0xee>(lo[2 * k], lo[2 * k + 1]), quads_lo[k]);
  }
  __m512d pairs[2], pairs_lo[2];
  for (int k = 0; k < 2; ++k) {
    pairs[k] = step(ShuffleHalves<0x88>(quads[2 * k], quads[2 * k + 1]),
                    ShuffleHalves<0x88>(quads_lo[2 * k], quads_lo[2 * k + 1]),
                    ShuffleHalves<0xdd>(quads[2 * k], quads[2 * k + 1]),
                    ShuffleHalves<0xdd>(quads_lo[2 * k], quads_lo[2 * k + 1]), pairs_lo[k]);
  }
  __m512d totals_lo;
  const __m512d totals =
      step(_mm512_mask_unpacklo_pd(pairs[0], 0xff, pairs[0], pairs[1]),
           _mm512_mask_unpacklo_pd(pairs_lo[0], 0xff, pairs_lo[0], pairs_lo[1]),
           _mm512_mask_unpackhi_pd(pairs[0], 0xff, pairs[0], pairs[1]),
           _mm512_mask_unpackhi_pd(pairs_lo[0], 0xff, pairs_lo[0], pairs_lo[1]), totals_lo);
  const __m512i order = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
  lo_out = _mm512_mask_permutexvar_pd(totals_lo, 0xff, order, totals_lo);
  return _mm512_mask_permutexvar_pd(totals, 0xff, order, totals);
}

__attribute__((always_inline)) inline __m512d SumEight(const __m512d* v) {
  return CombineEight(v, [](__m512d a, __m512d b) { return _mm512_add_pd(a, b); });
}

// Integer lanes (as the bits of v), added exactly.
__attribute__((always_inline)) inline __m512i IntSumEight(const __m512d* v) {
  return _mm512_castpd_si512(CombineEight(v, [](__m512d a, __m512d b) {
    return _mm512_castsi512_pd(_mm512_add_epi64(_mm512_castpd_si512(a), _mm512_castpd_si512(b)));
  }));
}

// The least (greatest) of each run's lanes, none of them NaN; of -0 and 0 either.
__attribute__((always_inline)) inline __m512d LeastEight(const __m512d* v) {
  return CombineEight(v, [](__m512d a, __m512d b) { return _mm512_mask_min_pd(a, 0xff, a, b); });
}
__attribute__((always_inline)) inline __m512d MostEight(const __m512d* v) {
  return CombineEight(v, [](__m512d a, __m512d b) { return _mm512_mask_max_pd(a, 0xff, a, b); });
}

// The least (greatest) of each run's int64 lanes (as the bits of v).
__attribute__((always_inline)) inline __m512i IntLeastEight(const __m512d* v) {
  return _mm512_castpd_si512(CombineEight(v, [](__m512d a, __m512d b) {
    return _mm512_castsi512_pd(_mm512_mask_min_epi64(
        _mm512_castpd_si512(a), 0xff, _mm512_castpd_si512(a), _mm512_castpd_si512(b)));
  }));
}
__attribute__((always_inline)) inline __m512i IntMostEight(const __m512d* v) {
  return _mm512_castpd_si512(CombineEight(v, [](__m512d a, __m512d b) {
    return _mm512_castsi512_pd(_mm512_mask_max_epi64(
        _mm512_castpd_si512(a), 0xff, _mm512_castpd_si512(a), _mm512_castpd_si512(b)));
  }));
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES

#endif  // __AVX512F__
