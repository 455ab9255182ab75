#pragma once

// The columns pass's tile (column_pass.cc) and its loops over rows a page or more apart (and
// 16-bit floats' narrow blocks, widened a group at a time): a group of kChunkRows rows at a time,
// each kChunk columns' accumulators loaded once into registers, added across the group's rows and
// stored back. A row at a time, every element cost a load and a store of each of its column's
// accumulators (1,024 float32 columns SUM 5.8 -> 9.0 GB/s, 16,384 columns 4.0 -> 9.4, one thread of
// the dev VM). Each column still takes its rows in order: the same additions and compares, the same
// bits. Included by the passes only, in their namespace.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/block_reduce.h"
#include "kernels/cpu/element_load.h"
#include "kernels/cpu/product_lanes.h"

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {

// cond ? a : b by masks: GCC turns a select of floats into a branch, which stops the vectorizer.
template <typename T>
__attribute__((always_inline)) inline T Select(bool cond, T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    using Bits = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
    const Bits mask = Bits{0} - static_cast<Bits>(cond);
    return std::bit_cast<T>((std::bit_cast<Bits>(a) & mask) | (std::bit_cast<Bits>(b) & ~mask));
  } else {
    using Bits = std::make_unsigned_t<T>;
    const Bits mask = Bits{0} - static_cast<Bits>(cond);
    return static_cast<T>((static_cast<Bits>(a) & mask) | (static_cast<Bits>(b) & ~mask));
  }
}

// What one column of the tile has gathered over the block.
template <typename ValueT, typename SumT>
struct Tile {
  SumT sum[kColumnsPassWidth];      // int64: the elements' signed high 32-bit halves (AddToSum)
  uint64_t low[kColumnsPassWidth];  // int64: their unsigned low halves
  double squares[kColumnsPassWidth];
  // The moments in one pass, about a shift (the column's first valid value in the block), as the
  // whole array's sums pass takes them: m2 = s2 - s1 * s1 / valid.
  double shift[kColumnsPassWidth];
  double s1[kColumnsPassWidth];
  double s2[kColumnsPassWidth];
  uint32_t nans[kColumnsPassWidth];
  int32_t first_nan[kColumnsPassWidth];
  ValueT least[kColumnsPassWidth];
  ValueT most[kColumnsPassWidth];
  int32_t least_at[kColumnsPassWidth];
  int32_t most_at[kColumnsPassWidth];
  // Floats' products, integers' magnitudes, a mantissa and an exponent apart, and integers'
  // wrapped products (product_lanes.h).
  double prod[kColumnsPassWidth];
  int64_t prod_exponent[kColumnsPassWidth];
  uint64_t int_prod[kColumnsPassWidth];
};

// What a copy of the columns pass gathers (a template argument): a request of MIN alone adds no
// sums and keeps no maxima (its Stats' sum 0, max_index -1: none, as MergeStats reads it).
struct Gathers {
  bool sum = true;  // and the moments' means
  bool min = false;
  bool max = false;
  bool moments = false;
  bool squares = false;
  bool prod = false;
};

// An element of a column into its products: an integer's into the wrapped one and the
// magnitude's, a float's into the float one.
template <DType kDType, typename ValueT>
__attribute__((always_inline)) inline void MultiplyOne(ValueT v, uint64_t& int_prod, double& prod,
                                                       int64_t& exponent) {
  if constexpr (IsInteger(kDType)) {
    MultiplyIntFactor<kDType>(v, int_prod, prod);
  } else {
    MultiplyFactor<kDType>(static_cast<double>(v), prod, exponent);
  }
}

// The block's products renormalized after its row r (every copy, layout and loop on the same
// rows, so a column's product takes the same steps whichever reads it).
template <DType kDType>
__attribute__((always_inline)) inline bool NormalizeAfterRow(size_t r) {
  return (r + 1) % kProductFactors<kDType> == 0;
}

// An int64 element added exactly as its unsigned low and signed high 32-bit halves, as the sums
// pass adds them (int_sums.h): exact in 64 bits for 2^31 rows, where overflow-checked adds do not
// vectorize; other dtypes' into the sum alone.
template <DType kDType, typename ValueT, typename SumT>
__attribute__((always_inline)) inline void AddToSum(ValueT kept, SumT& sum, uint64_t& low) {
  if constexpr (kDType == DType::kInt64) {
    low += static_cast<uint64_t>(kept) & 0xffffffffu;
    sum += kept >> 32;  // arithmetic shift: the high half, signed
  } else {
    sum += static_cast<SumT>(kept);
  }
}

inline constexpr size_t kChunk = 16;
inline constexpr size_t kChunkRows = 16;

// The dtype a row group's chunks read: 16-bit floats come widened to float32 (the group's rows
// widened whole first: converted in the chunks, their halves were stored apart and read back
// as one vector, which the stores cannot forward: float16 SUM 0.5x).
template <DType kDType>
inline constexpr DType kChunkDType =
    kDType == DType::kFloat16 || kDType == DType::kBFloat16 ? DType::kFloat32 : kDType;

// kN elements of a row (of kChunkDType) as ValueT: int32 to int64, floats as they are.
template <DType kLoad, size_t kN, typename ValueT>
__attribute__((always_inline)) inline void ChunkValues(const typename Element<kLoad>::Storage* x,
                                                       ValueT* out) {
  if constexpr (std::is_same_v<ValueT, typename Element<kLoad>::Storage>) {
    std::memcpy(out, x, kN * sizeof(ValueT));
  } else {
    for (size_t c = 0; c < kN; ++c) out[c] = static_cast<ValueT>(x[c]);
  }
}

// A row group's `count` rows (`group` its first, rows `stride` elements apart, the first the
// block's row r0) of columns [c0, c0 + kN) added into the tile. kNanFree: the rows are taken to
// hold no NaN (the caller checks the sums after).
template <DType kLoad, Gathers kG, bool kNanFree, size_t kN, typename ValueT, typename SumT>
__attribute__((always_inline)) inline void AddChunk(const typename Element<kLoad>::Storage* group,
                                                    size_t stride, size_t count, size_t r0,
                                                    size_t c0, Tile<ValueT, SumT>& t) {
  constexpr bool kMasked = !IsInteger(kLoad) && !kNanFree;  // NaN possible
  SumT sum[kN];
  uint64_t low[kN];
  double squares[kN], shift[kN], s1[kN], s2[kN];
  uint32_t nans[kN];
  ValueT least[kN], most[kN];
  int32_t least_at[kN], most_at[kN];
  double prod[kN];
  int64_t prod_exponent[kN];
  uint64_t int_prod[kN];
  for (size_t c = 0; c < kN; ++c) {
    if constexpr (kG.sum) sum[c] = t.sum[c0 + c];
    if constexpr (kG.sum && kLoad == DType::kInt64) low[c] = t.low[c0 + c];
    nans[c] = t.nans[c0 + c];
    if constexpr (kG.squares) squares[c] = t.squares[c0 + c];
    if constexpr (kG.moments) {
      shift[c] = t.shift[c0 + c];
      s1[c] = t.s1[c0 + c];
      s2[c] = t.s2[c0 + c];
    }
    if constexpr (kG.min) {
      least[c] = t.least[c0 + c];
      least_at[c] = t.least_at[c0 + c];
    }
    if constexpr (kG.max) {
      most[c] = t.most[c0 + c];
      most_at[c] = t.most_at[c0 + c];
    }
    if constexpr (kG.prod) {
      prod[c] = t.prod[c0 + c];
      prod_exponent[c] = t.prod_exponent[c0 + c];
      int_prod[c] = t.int_prod[c0 + c];
    }
  }
  for (size_t r = 0; r < count; ++r) {
    ValueT x[kN];
    ChunkValues<kLoad, kN>(group + r * stride + c0, x);
    const auto row = static_cast<int32_t>(r0 + r);
#pragma GCC unroll 1  // a loop for the vectorizer: unrolled whole, it became scalar compares
    for (size_t c = 0; c < kN; ++c) {
      const ValueT v = x[c];
      const bool nan = kMasked && v != v;
      const ValueT kept = Select(nan, ValueT{}, v);
      nans[c] += static_cast<uint32_t>(nan);
      // Bitwise, not short-circuit, operators and Select throughout: no branch in the loop.
      if constexpr (kG.sum) AddToSum<kLoad>(kept, sum[c], low[c]);
      if constexpr (kG.squares) {
        squares[c] += static_cast<double>(kept) * static_cast<double>(kept);
      }
      if constexpr (kG.moments) {
        const double d = Select(nan, 0.0, static_cast<double>(v) - shift[c]);
        s1[c] += d;
        s2[c] += d * d;
      }
      // Strict compares in row order: the first occurrence stays.
      if constexpr (kG.min) {
        const bool less = !kNanFree ? (!nan) & ((least_at[c] < 0) | (v < least[c])) : v < least[c];
        least[c] = Select(less, v, least[c]);
        least_at[c] = Select(less, row, least_at[c]);
      }
      if constexpr (kG.max) {
        const bool more = !kNanFree ? (!nan) & ((most_at[c] < 0) | (v > most[c])) : v > most[c];
        most[c] = Select(more, v, most[c]);
        most_at[c] = Select(more, row, most_at[c]);
      }
      if constexpr (kG.prod) MultiplyOne<kLoad>(v, int_prod[c], prod[c], prod_exponent[c]);
    }
    if (kG.prod && NormalizeAfterRow<kLoad>(r0 + r)) {
      for (size_t c = 0; c < kN; ++c) Normalize(prod[c], prod_exponent[c]);
    }
  }
  for (size_t c = 0; c < kN; ++c) {
    if constexpr (kG.sum) t.sum[c0 + c] = sum[c];
    if constexpr (kG.sum && kLoad == DType::kInt64) t.low[c0 + c] = low[c];
    t.nans[c0 + c] = nans[c];
    if constexpr (kG.squares) t.squares[c0 + c] = squares[c];
    if constexpr (kG.moments) {
      t.s1[c0 + c] = s1[c];
      t.s2[c0 + c] = s2[c];
    }
    if constexpr (kG.min) {
      t.least[c0 + c] = least[c];
      t.least_at[c0 + c] = least_at[c];
    }
    if constexpr (kG.max) {
      t.most[c0 + c] = most[c];
      t.most_at[c0 + c] = most_at[c];
    }
    if constexpr (kG.prod) {
      t.prod[c0 + c] = prod[c];
      t.prod_exponent[c0 + c] = prod_exponent[c];
      t.int_prod[c0 + c] = int_prod[c];
    }
  }
}

// `chunk(group, group_stride, count, r0, c0, n)` over the block's columns, a group of kChunkRows
// rows at a time (16-bit floats widened into `widened`, kChunkRows * width floats, first): whole
// chunks of kChunk columns (n = kChunk), then each of the last few alone (n = 1). 16-bit floats'
// next group is prefetched while this one is reduced, since their widening waits on its loads
// (16 threads of the H200 host, 4,096 and 16,384 float16 columns 1.02-1.52x); the others' is not:
// rows a page apart (a wide table's tiles) read 2.1x faster without it (16,384 float32 columns,
// SUM, one thread of the dev VM; 0.71-1.01x on the host's 16 threads).
template <DType kDType, typename ChunkF>
__attribute__((always_inline)) inline void ForEachChunk(
    const typename Element<kDType>::Storage* data, size_t stride, size_t rows, size_t width,
    float* widened, ChunkF chunk) {
  constexpr bool kWiden = kChunkDType<kDType> != kDType;
  const size_t chunked = width / kChunk * kChunk;
  for (size_t r0 = 0; r0 < rows; r0 += kChunkRows) {
    const size_t count = std::min(rows - r0, kChunkRows);
    if constexpr (kWiden) {
      for (size_t r = r0 + kChunkRows; r < std::min(rows, r0 + 2 * kChunkRows); ++r) {
        const auto* line = reinterpret_cast<const char*>(data + r * stride);
        for (size_t b = 0; b < width * sizeof(*data); b += 64) __builtin_prefetch(line + b, 0, 2);
      }
    }
    const typename Element<kChunkDType<kDType>>::Storage* group;
    size_t group_stride;
    if constexpr (kWiden) {
      for (size_t r = 0; r < count; ++r) {
        kPasses.widen(kDType == DType::kFloat16, data + (r0 + r) * stride, width,
                      widened + r * width);
      }
      group = widened;
      group_stride = width;
    } else {
      group = data + r0 * stride;
      group_stride = stride;
    }
    for (size_t c0 = 0; c0 < chunked; c0 += kChunk) {
      chunk(group, group_stride, count, r0, c0, std::integral_constant<size_t, kChunk>{});
    }
    for (size_t c = chunked; c < width; ++c) {
      chunk(group, group_stride, count, r0, c, std::integral_constant<size_t, 1>{});
    }
  }
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES
