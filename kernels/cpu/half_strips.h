#pragma once

// 16-bit floats' columns in strips (the columns pass, column_pass.cc; AVX-512BW): a strip of up
// to 128 columns goes down a band of the block's rows with its accumulators in registers, the
// strip of a row a few ahead prefetched, then the next strip over the same band (in L2), then the
// next band. The row-at-a-time loops widen each row into float32 first and add it into
// accumulators in memory, three stores for 16 elements; these store nothing in the loop. A probe
// on 16 threads of the H200 host (docs/results/2026-11-29-h200-half-columns): 1,024 float16
// columns SUM 51-56 -> 109-126 GB/s, MIN 78-81 -> 121-146.
// SUM (and MEAN), SUM_SQUARES and the moments (VAR, STD) add each column's rows in row order as
// those loops do (the same bits), and PROD alone multiplies them so, renormalized after the same
// rows; MIN or MAX alone (their arg and NaN forms too) compare keys, 32
// columns an instruction: an element's bits as an int16 that orders as its value, its magnitude
// negated where the sign is set, so that both zeros key 0 and the strict compare keeps the first,
// as the loops' does. A block that holds a NaN (a column whose sum is NaN, or a key past an
// infinity's) is left to those loops (AddHalfStrips answers false). Included by column_pass.cc
// only, in the passes' namespace.

#if defined(__AVX512BW__)
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "common/reduction/dtype.h"
#include "kernels/cpu/column_chunks.h"
#include "kernels/cpu/element_load.h"

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {

// The copies of the pass the strips serve: sums alone, with the moments or with the squares, one
// extreme, or the products alone.
template <DType kDType, Gathers kG>
inline constexpr bool kStripsServe =
    (kDType == DType::kFloat16 || kDType == DType::kBFloat16) &&
    (kG.prod ? !kG.sum && !kG.min && !kG.max && !kG.moments && !kG.squares
             : (kG.sum && !kG.min && !kG.max && !(kG.moments && kG.squares)) ||
                   (!kG.sum && !kG.moments && !kG.squares && kG.min != kG.max));

inline constexpr size_t kStripsLeastRows = 8;          // fewer rows than this: the loops
inline constexpr size_t kStripsMostRows = 32767;       // the keys' row numbers are int16
inline constexpr size_t kStripsBandBytes = 256 << 10;  // a band of rows, all strips, in L2
// A float16 is a multiple of 2^-24 under 2^16 in magnitude: its difference from the shift (another
// float16) is exact in float64, and so are the differences' sum s1 and the column's sum over up to
// this many rows (under 2^53 units of 2^-24), so the sum is s1 + rows * shift exactly (rows *
// shift: 13 bits by 11), the bits the loops' additions give. An infinity gives the loops' sum too;
// one as the shift (the first row) gives NaN, and the loops.
inline constexpr size_t kExactHalfRows = 4096;

// Prefetches a strip of kBytes at address `at`: each of its lines (its last byte's too: a strip
// need not start a line). An address, not a pointer: past the block's rows it may lie past the
// data (a prefetch never faults), where a pointer may not point.
template <size_t kBytes>
__attribute__((always_inline)) inline void PrefetchStrip(uintptr_t at) {
#pragma GCC unroll 8
  for (size_t b = 0; b < kBytes; b += 64)
    __builtin_prefetch(reinterpret_cast<const char*>(at + b), 0, 3);
  __builtin_prefetch(reinterpret_cast<const char*>(at + kBytes - 1), 0, 3);
}

// Rows ahead a strip of kBytes prefetches: about 32 lines in flight.
template <size_t kBytes>
inline constexpr size_t kStripAhead = std::clamp<size_t>(2048 / kBytes, 8, 32);

// Eight 16-bit floats widened to float64 (exactly). (Masked: GCC 12's unmasked form warns of an
// undefined operand.)
template <DType kDType>
__attribute__((always_inline)) inline __m512d Widened(__m128i bits) {
  if constexpr (kDType == DType::kFloat16)
    return _mm512_maskz_cvtps_pd(0xff, _mm256_cvtph_ps(bits));
  const __m256i words = _mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16);
  return _mm512_maskz_cvtps_pd(0xff, _mm256_castsi256_ps(words));
}

// Group k (8 columns) of a strip of kGroups in a row, the last masked to the block's width.
template <size_t kGroups>
__attribute__((always_inline)) inline __m128i StripGroup(const uint16_t* row, size_t k,
                                                         __mmask8 last) {
  const auto* at = reinterpret_cast<const __m128i*>(row + 8 * k);
  return k + 1 < kGroups ? _mm_loadu_si128(at) : _mm_maskz_loadu_epi16(last, at);
}

// Columns [c0, c0 + 8 * kGroups) of rows [r0, r1) added into the tile's sums (and moments about
// its shifts): a column's additions in row order, as AddRowByRow's. `last` masks the last group's
// columns past the block's width. The moments' strips are 64 columns wide, their shifts read
// from the tile (a load beside the arithmetic): in a probe 64 wide without the sums read 100
// GB/s where 32 wide with them, everything in registers, read 71-75 (1,024 float16 columns, 16
// threads of the H200 host); in the pass, with the sums, both read 53-60, bound by the
// conversions. kSums: the sums added too (not where AddHalfStrips derives them from the moments);
// kSquares: the squares too (SUM_SQUARES), 64 columns wide likewise.
template <DType kDType, bool kMoments, bool kSums, bool kSquares, size_t kGroups, typename SumT>
void AddSumsStrip(const uint16_t* data, size_t stride, size_t r0, size_t r1, size_t c0,
                  __mmask8 last, Tile<float, SumT>& t) {
  constexpr size_t kBytes = 16 * kGroups;
  __m512d sum[kGroups], s1[kGroups], s2[kGroups], squares[kGroups];
#pragma GCC unroll 16
  for (size_t k = 0; k < kGroups; ++k) {
    const __mmask8 m = k + 1 < kGroups ? __mmask8(0xff) : last;
    const size_t c = c0 + 8 * k;
    if constexpr (kSums) sum[k] = _mm512_maskz_loadu_pd(m, t.sum + c);
    if constexpr (kSquares) squares[k] = _mm512_maskz_loadu_pd(m, t.squares + c);
    if constexpr (kMoments) {
      s1[k] = _mm512_maskz_loadu_pd(m, t.s1 + c);
      s2[k] = _mm512_maskz_loadu_pd(m, t.s2 + c);
    }
  }
  const uintptr_t ahead = kStripAhead<kBytes> * stride * sizeof(uint16_t);
  const double* shift = t.shift + c0;  // set past the width to the group's end (AddHalfStrips)
  for (size_t r = r0; r < r1; ++r) {
    const uint16_t* row = data + r * stride + c0;
    PrefetchStrip<kBytes>(reinterpret_cast<uintptr_t>(row) + ahead);
#pragma GCC unroll 16
    for (size_t k = 0; k < kGroups; ++k) {
      const __m512d v = Widened<kDType>(StripGroup<kGroups>(row, k, last));
      if constexpr (kSums) sum[k] = _mm512_add_pd(sum[k], v);
      if constexpr (kSquares) squares[k] = _mm512_add_pd(squares[k], _mm512_mul_pd(v, v));
      if constexpr (kMoments) {
        const __m512d d = _mm512_sub_pd(v, _mm512_loadu_pd(shift + 8 * k));
        s1[k] = _mm512_add_pd(s1[k], d);
        s2[k] = _mm512_add_pd(s2[k], _mm512_mul_pd(d, d));
      }
    }
  }
#pragma GCC unroll 16
  for (size_t k = 0; k < kGroups; ++k) {
    const __mmask8 m = k + 1 < kGroups ? __mmask8(0xff) : last;
    const size_t c = c0 + 8 * k;
    if constexpr (kSums) _mm512_mask_storeu_pd(t.sum + c, m, sum[k]);
    if constexpr (kSquares) _mm512_mask_storeu_pd(t.squares + c, m, squares[k]);
    if constexpr (kMoments) {
      _mm512_mask_storeu_pd(t.s1 + c, m, s1[k]);
      _mm512_mask_storeu_pd(t.s2 + c, m, s2[k]);
    }
  }
}

// Columns [c0, c0 + 8 * kGroups) of rows [r0, r1) multiplied into the tile's products: a
// column's factors in row order, renormalized after the block's same rows (NormalizeAfterRow),
// as AddRowByRow's, so the same bits. A NaN makes its column's product NaN (AddHalfStrips then
// leaves the block to the loops, which skip and count it). `last` as AddSumsStrip's.
template <DType kDType, size_t kGroups, typename SumT>
void MultiplyStrip(const uint16_t* data, size_t stride, size_t r0, size_t r1, size_t c0,
                   __mmask8 last, Tile<float, SumT>& t) {
  constexpr size_t kBytes = 16 * kGroups;
  Lanes prod[kGroups];
  Mask exponent[kGroups];
#pragma GCC unroll 16
  for (size_t k = 0; k < kGroups; ++k) {
    const __mmask8 m = k + 1 < kGroups ? __mmask8(0xff) : last;
    prod[k] = reinterpret_cast<Lanes>(_mm512_maskz_loadu_pd(m, t.prod + c0 + 8 * k));
    exponent[k] = reinterpret_cast<Mask>(_mm512_maskz_loadu_epi64(m, t.prod_exponent + c0 + 8 * k));
  }
  const uintptr_t ahead = kStripAhead<kBytes> * stride * sizeof(uint16_t);
  for (size_t r = r0; r < r1; ++r) {
    const uint16_t* row = data + r * stride + c0;
    PrefetchStrip<kBytes>(reinterpret_cast<uintptr_t>(row) + ahead);
#pragma GCC unroll 16
    for (size_t k = 0; k < kGroups; ++k) {
      prod[k] *= reinterpret_cast<Lanes>(Widened<kDType>(StripGroup<kGroups>(row, k, last)));
    }
    if (NormalizeAfterRow<kDType>(r)) {
#pragma GCC unroll 16
      for (size_t k = 0; k < kGroups; ++k) Normalize(prod[k], exponent[k]);
    }
  }
#pragma GCC unroll 16
  for (size_t k = 0; k < kGroups; ++k) {
    const __mmask8 m = k + 1 < kGroups ? __mmask8(0xff) : last;
    _mm512_mask_storeu_pd(t.prod + c0 + 8 * k, m, reinterpret_cast<__m512d>(prod[k]));
    _mm512_mask_storeu_epi64(t.prod_exponent + c0 + 8 * k, m,
                             reinterpret_cast<__m512i>(exponent[k]));
  }
}

// 32 elements' keys: the magnitude, negated where the sign is set ((bits & 0x7fff) ^ sign, less
// the sign: ternary logic 0x6c is (A & C) ^ B).
__attribute__((always_inline)) inline __m512i StripKeys(__m512i bits) {
  const __m512i sign = _mm512_srai_epi16(bits, 15);
  const __m512i flipped = _mm512_ternarylogic_epi32(bits, sign, _mm512_set1_epi16(0x7fff), 0x6c);
  return _mm512_sub_epi16(flipped, sign);
}

// One extreme's keys, the row of each column's first, and the other extreme's keys (which show a
// NaN of the other sign), between bands.
struct StripKeysTile {
  int16_t best[kColumnsPassWidth];
  int16_t row[kColumnsPassWidth];
  int16_t other[kColumnsPassWidth];
};

// Columns [c0, c0 + 32 * kGroups) of rows [r0, r1): the least (kLeast) or greatest key and its
// first row. `last` masks the last group's columns past the block's width.
template <bool kLeast, size_t kGroups>
void FindKeysStrip(const uint16_t* data, size_t stride, size_t r0, size_t r1, size_t c0,
                   __mmask32 last, StripKeysTile& t) {
  constexpr size_t kBytes = 64 * kGroups;
  __m512i best[kGroups], row_of[kGroups], other[kGroups];
#pragma GCC unroll 4
  for (size_t k = 0; k < kGroups; ++k) {
    const size_t c = c0 + 32 * k;
    best[k] = _mm512_loadu_si512(t.best + c);
    row_of[k] = _mm512_loadu_si512(t.row + c);
    other[k] = _mm512_loadu_si512(t.other + c);
  }
  const uintptr_t ahead = kStripAhead<kBytes> * stride * sizeof(uint16_t);
  for (size_t r = r0; r < r1; ++r) {
    const uint16_t* row = data + r * stride + c0;
    PrefetchStrip<kBytes>(reinterpret_cast<uintptr_t>(row) + ahead);
    const __m512i r_of = _mm512_set1_epi16(static_cast<int16_t>(r));
#pragma GCC unroll 4
    for (size_t k = 0; k < kGroups; ++k) {
      const uint16_t* at = row + 32 * k;
      const __m512i keys =
          StripKeys(k + 1 < kGroups ? _mm512_loadu_si512(at) : _mm512_maskz_loadu_epi16(last, at));
      const __mmask32 better =
          kLeast ? _mm512_cmplt_epi16_mask(keys, best[k]) : _mm512_cmpgt_epi16_mask(keys, best[k]);
      best[k] = _mm512_mask_mov_epi16(best[k], better, keys);
      row_of[k] = _mm512_mask_mov_epi16(row_of[k], better, r_of);
      other[k] = kLeast ? _mm512_max_epi16(other[k], keys) : _mm512_min_epi16(other[k], keys);
    }
  }
#pragma GCC unroll 4
  for (size_t k = 0; k < kGroups; ++k) {
    const size_t c = c0 + 32 * k;
    _mm512_storeu_si512(t.best + c, best[k]);
    _mm512_storeu_si512(t.row + c, row_of[k]);
    _mm512_storeu_si512(t.other + c, other[k]);
  }
}

// The block's width in strips of kGroups groups of kLanes columns, then of half as many, down to
// one group; strip(c0, groups, last) with `last` the mask of the width's last group (whole but in
// the strip that ends the width).
template <size_t kGroups, size_t kLanes, typename StripF>
__attribute__((always_inline)) inline void ForEachStrip(size_t width, size_t& g, StripF strip) {
  const size_t groups = (width + kLanes - 1) / kLanes;
  const size_t tail = width % kLanes;
  for (; g + kGroups <= groups; g += kGroups) {
    const bool ends = g + kGroups == groups && tail != 0;
    strip(g * kLanes, std::integral_constant<size_t, kGroups>{},
          ends ? (uint64_t{1} << tail) - 1 : ~uint64_t{0});
  }
  if constexpr (kGroups > 1) ForEachStrip<kGroups / 2, kLanes>(width, g, strip);
}

template <size_t kGroups, size_t kLanes, typename StripF>
__attribute__((always_inline)) inline void ForEachStrip(size_t width, StripF strip) {
  size_t g = 0;
  ForEachStrip<kGroups, kLanes>(width, g, strip);
}

// The block's rows in bands of about kStripsBandBytes, each band's strips in turn.
template <typename BandF>
__attribute__((always_inline)) inline void ForEachBand(size_t rows, size_t width, BandF band) {
  const size_t rows_a_band = std::max<size_t>(32, kStripsBandBytes / (2 * width));
  for (size_t r0 = 0; r0 < rows; r0 += rows_a_band) band(r0, std::min(rows, r0 + rows_a_band));
}

// The tile's sums and moments (shifts: the first row's values), one extreme and its first row, or
// the products, of a block of kStripsLeastRows to kStripsMostRows rows; false (the tile left to be
// cleared) if a column holds a NaN or, for sums, infinities of both signs (or, for float16's
// moments, an infinite first row; for products, 0 times an infinity).
template <DType kDType, Gathers kG, typename SumT>
bool AddHalfStrips(const uint16_t* data, size_t stride, size_t rows, size_t width,
                   Tile<float, SumT>& t) {
  using E = Element<kDType>;
  if constexpr (kG.prod) {
    ForEachBand(rows, width, [&](size_t r0, size_t r1) {
      ForEachStrip<8, 8>(width, [&](size_t c0, auto groups, uint64_t last) {
        MultiplyStrip<kDType, decltype(groups)::value>(data, stride, r0, r1, c0, __mmask8(last), t);
      });
    });
    bool nan = false;
    for (size_t c = 0; c < width; ++c) nan |= t.prod[c] != t.prod[c];
    return !nan;
  } else if constexpr (kG.sum) {
    if constexpr (kG.moments) {
      for (size_t c = 0; c < width; ++c) t.shift[c] = E::Load(data[c]);
      for (size_t c = width; c < (width + 7) / 8 * 8; ++c) t.shift[c] = 0;
    }
    // float16's sums follow from the moments over up to kExactHalfRows rows, one addition an
    // element fewer (16 threads of the H200 host, 1,024 and 4,096 float16 columns VAR in the pass:
    // 53-56 -> 58-62 and 64-69 -> 70-75 GB/s, in two calls).
    constexpr bool kHalfMoments = kDType == DType::kFloat16 && kG.moments;
    const bool derived = kHalfMoments && rows <= kExactHalfRows;
    ForEachBand(rows, width, [&](size_t r0, size_t r1) {
      constexpr size_t kWidest = kG.moments || kG.squares ? 8 : 16;  // groups in registers
      ForEachStrip<kWidest, 8>(width, [&](size_t c0, auto groups, uint64_t last) {
        constexpr size_t kGroups = decltype(groups)::value;
        if constexpr (kHalfMoments) {
          if (derived) {
            return AddSumsStrip<kDType, true, false, false, kGroups>(data, stride, r0, r1, c0,
                                                                     __mmask8(last), t);
          }
        }
        AddSumsStrip<kDType, kG.moments, true, kG.squares, kGroups>(data, stride, r0, r1, c0,
                                                                    __mmask8(last), t);
      });
    });
    if (derived) {
      for (size_t c = 0; c < width; ++c)
        t.sum[c] = t.s1[c] + static_cast<double>(rows) * t.shift[c];
    }
    bool nan = false;
    for (size_t c = 0; c < width; ++c) nan |= t.sum[c] != t.sum[c];
    return !nan;
  } else {
    constexpr bool kLeast = kG.min;
    StripKeysTile keys;
    const size_t padded = (width + 31) / 32 * 32;  // the strips' whole vectors
    std::fill_n(keys.best, padded, kLeast ? INT16_MAX : INT16_MIN);
    std::fill_n(keys.row, padded, int16_t{-1});
    std::fill_n(keys.other, padded, kLeast ? INT16_MIN : INT16_MAX);
    ForEachBand(rows, width, [&](size_t r0, size_t r1) {
      ForEachStrip<4, 32>(width, [&](size_t c0, auto groups, uint64_t last) {
        FindKeysStrip<kLeast, decltype(groups)::value>(data, stride, r0, r1, c0, __mmask32(last),
                                                       keys);
      });
    });
    // An infinity's magnitude: a key past it, either way, is a NaN's.
    constexpr int kInfinity = kInfinityBits<kDType>;
    for (size_t c = 0; c < width; ++c) {
      const int high = std::max(keys.best[c], keys.other[c]);
      const int low = std::min(keys.best[c], keys.other[c]);
      if (high > kInfinity || low < -kInfinity) return false;
    }
    for (size_t c = 0; c < width; ++c) {
      const int32_t at = keys.row[c];
      const float value = E::Load(data[at * stride + c]);  // its own bits: either zero
      if constexpr (kLeast) {
        t.least[c] = value;
        t.least_at[c] = at;
      } else {
        t.most[c] = value;
        t.most_at[c] = at;
      }
    }
    return true;
  }
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES

#endif  // __AVX512BW__
