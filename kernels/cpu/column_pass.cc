// The columns pass (block_reduce.h): a block of a row-major table's rows reduced down each of its
// columns, every column's accumulations side by side in arrays of the tile's width, so that each
// row is read once and each loop over a row's elements vectorizes (the issue 23 layout NumPy
// calls axis=0): rows closer than a page one at a time, rows a page or more apart, and 16-bit
// floats' blocks under 128 columns, in groups (column_chunks.h); each copy gathers only what the
// request reads (Gathers). A column's block then becomes a Stats merged after the
// column's (MergeStats: compensated sums, first occurrences, Chan's moments, products). Every
// dtype and op.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>

#include "kernels/cpu/block_reduce.h"
#include "kernels/cpu/column_chunks.h"
#include "kernels/cpu/element_load.h"
#include "kernels/cpu/half_strips.h"
#include "kernels/cpu/product_lanes.h"
#include "kernels/cpu/sum_lanes.h"

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {
namespace {

// The row's elements as ValueT: 16-bit floats widened (F16C where the copy has it) and int32
// ones copied into `out`; float32, float64 and int64 read where they are.
template <DType kDType, typename ValueT>
const ValueT* Values(const typename Element<kDType>::Storage* row, size_t width, ValueT* out) {
  if constexpr (std::is_same_v<ValueT, typename Element<kDType>::Storage>) {
    return row;
  } else if constexpr (kDType == DType::kInt32) {
    for (size_t c = 0; c < width; ++c) out[c] = row[c];
    return out;
  } else {
    kPasses.widen(kDType == DType::kFloat16, row, width, out);
    return out;
  }
}

// Rows read a few ahead: the hardware prefetchers alone left the loads waiting (one thread of
// the dev VM: 1,024 float16 columns SUM 1.25x, 256 float32 columns MIN 1.69x).
constexpr size_t kRowsAhead = 4;
constexpr size_t kNanFreeLeastRows = 8;  // AddNanFreeFirst

// Rows closer than a page: a row at a time, each element added into its column's accumulators
// in the tile (in L1), so the reads run in address order, which the hardware prefetchers follow
// (column_chunks.h's groups jump between a page's rows: 256 float32 columns MIN 0.65x).
// kNanFree: the block is taken to hold no NaN (the caller checks the sums after, and runs the
// block again without it if one holds a NaN).
template <DType kDType, Gathers kG, bool kNanFree, typename ValueT, typename SumT>
void AddRowByRow(const typename Element<kDType>::Storage* data, size_t stride, size_t rows,
                 size_t width, ValueT* widened, Tile<ValueT, SumT>& t) {
  constexpr bool kMasked = !IsInteger(kDType) && !kNanFree;  // NaN possible
  for (size_t r = 0; r < rows; ++r) {
    if (r + kRowsAhead < rows) {
      const auto* ahead = reinterpret_cast<const char*>(data + (r + kRowsAhead) * stride);
      for (size_t b = 0; b < width * sizeof(*data); b += 64) {
        // 16-bit floats' rows into L2, the others' into L1 (16 threads of the H200 host, against
        // L1: 1,024 float16 columns 1.04-1.21x in two calls, 0.81-0.98x in a third, noisier one;
        // every dtype into L2 lost 64 columns 0.88-0.90x).
        if constexpr (sizeof(*data) == 2) {
          __builtin_prefetch(ahead + b, 0, 2);
        } else {
          __builtin_prefetch(ahead + b, 0, 3);
        }
      }
    }
    // int32 converted in the loop (vpmovsxdq), not copied into int64 first.
    const auto* x = [&] {
      if constexpr (kDType == DType::kInt32) {
        return data + r * stride;
      } else {
        return Values<kDType, ValueT>(data + r * stride, width, widened);
      }
    }();
    const auto row = static_cast<int32_t>(r);
    for (size_t c = 0; c < width; ++c) {
      const ValueT v = x[c];
      const bool nan = kMasked && v != v;
      const ValueT kept = Select(nan, ValueT{}, v);
      t.nans[c] += static_cast<uint32_t>(nan);
      // Bitwise, not short-circuit, operators and Select throughout: no branch in the loop.
      if constexpr (kG.sum) AddToSum<kDType>(kept, t.sum[c], t.low[c]);
      if constexpr (kG.squares) {
        t.squares[c] += static_cast<double>(kept) * static_cast<double>(kept);
      }
      if constexpr (kG.moments) {
        const double d = Select(nan, 0.0, static_cast<double>(v) - t.shift[c]);
        t.s1[c] += d;
        t.s2[c] += d * d;
      }
      // Strict compares in row order: the first occurrence stays.
      if constexpr (kG.min) {
        const bool least =
            !kNanFree ? (!nan) & ((t.least_at[c] < 0) | (v < t.least[c])) : v < t.least[c];
        t.least[c] = Select(least, v, t.least[c]);
        t.least_at[c] = Select(least, row, t.least_at[c]);
      }
      if constexpr (kG.max) {
        const bool most =
            !kNanFree ? (!nan) & ((t.most_at[c] < 0) | (v > t.most[c])) : v > t.most[c];
        t.most[c] = Select(most, v, t.most[c]);
        t.most_at[c] = Select(most, row, t.most_at[c]);
      }
      if constexpr (kG.prod) MultiplyOne<kDType>(v, t.int_prod[c], t.prod[c], t.prod_exponent[c]);
    }
    if (kG.prod && NormalizeAfterRow<kDType>(r)) {
      for (size_t c = 0; c < width; ++c) Normalize(t.prod[c], t.prod_exponent[c]);
    }
  }
}

// `add(kNanFree)` over the block: floats' sums, moments and extremes without the NaN masks first
// (a NaN enters the sums, so a column whose sum is NaN after, rare, as is one of infinities of
// both signs, sends the block again with them). Without masks the extremes start at the first
// row's value (a NaN there is never replaced, and the sum tells); strict compares with a NaN are
// false, so none becomes one. A float copy without sums (an extreme alone) keeps the masks;
// integers' extremes start at the first row too (int32 MIN down 256 to 16,384 columns, one
// thread of the dev VM: 1.05-1.4x).
// Blocks of a few rows go with the masks at once: segmented_reduce.cc's groups of segments of 1
// to 3 elements are padded with NaN, which would send every one of them again.
template <DType kDType, Gathers kG, typename ValueT, typename SumT, typename AddF>
__attribute__((always_inline)) inline void AddNanFreeFirst(const ValueT* first_row, size_t rows,
                                                           size_t width, Tile<ValueT, SumT>& t,
                                                           AddF add) {
  constexpr bool kInteger = IsInteger(kDType);  // no NaN: the first pass is the only one
  if (!kInteger && (!kG.sum || rows < kNanFreeLeastRows)) {
    add(std::false_type{});
  } else {
    for (size_t c = 0; c < width && first_row != nullptr; ++c) {
      if constexpr (kG.min) {
        t.least[c] = first_row[c];
        t.least_at[c] = 0;
      }
      if constexpr (kG.max) {
        t.most[c] = first_row[c];
        t.most_at[c] = 0;
      }
    }
    add(std::true_type{});
    if constexpr (kInteger) return;
    bool nan = false;
    for (size_t c = 0; c < width; ++c) nan |= t.sum[c] != t.sum[c];
    if (!nan) return;
    for (size_t c = 0; c < width; ++c) {
      t.sum[c] = t.squares[c] = t.s1[c] = t.s2[c] = 0;
      t.least[c] = t.most[c] = 0;
      t.least_at[c] = t.most_at[c] = -1;
      t.prod[c] = 1.0;
      t.prod_exponent[c] = 0;
    }
    add(std::false_type{});
  }
}

// Each column's first valid value in the block (0 where it has none), the shift its moments are
// taken about: a value of the column keeps s1 and s2 small beside the column's spread, as the
// whole array's sums pass does with its block's first valid value. Usually the first row alone.
template <DType kDType, typename ValueT>
void SetShifts(const typename Element<kDType>::Storage* data, size_t stride, size_t rows,
               size_t width, ValueT* widened, double* shift) {
  size_t pending = width;
  for (size_t r = 0; r < rows && pending > 0; ++r) {
    const ValueT* x = Values<kDType, ValueT>(data + r * stride, width, widened);
    pending = 0;
    for (size_t c = 0; c < width; ++c) {
      const bool open = r == 0 || shift[c] != shift[c];  // NaN: not found yet
      shift[c] = open ? static_cast<double>(x[c]) : shift[c];
      pending += open && x[c] != x[c] ? 1 : 0;
    }
  }
  for (size_t c = 0; c < width; ++c) shift[c] = shift[c] != shift[c] ? 0.0 : shift[c];
}

// The tile as a block starts it.
template <typename ValueT, typename SumT>
void ClearTile(size_t width, Tile<ValueT, SumT>& t) {
  for (size_t c = 0; c < width; ++c) {
    t.sum[c] = 0;
    t.low[c] = 0;
    t.squares[c] = 0;
    t.shift[c] = t.s1[c] = t.s2[c] = 0;
    t.nans[c] = 0;
    t.first_nan[c] = -1;
    t.least[c] = t.most[c] = 0;
    t.least_at[c] = t.most_at[c] = -1;
    t.prod[c] = 1.0;
    t.prod_exponent[c] = 0;
    t.int_prod[c] = 1;
  }
}

// The block's rows into the cleared tile: a row at a time, or in column_chunks.h's groups.
template <DType kDType, Gathers kG, typename ValueT, typename SumT>
void AddBlock(const typename Element<kDType>::Storage* data, size_t stride, size_t rows,
              size_t width, Tile<ValueT, SumT>& t) {
  using Storage = typename Element<kDType>::Storage;
  constexpr bool kInteger = IsInteger(kDType);
  ValueT widened[kColumnsPassWidth];
  if constexpr (kG.moments) SetShifts<kDType>(data, stride, rows, width, widened, t.shift);
  constexpr DType kLoad = kChunkDType<kDType>;
  using LoadStorage = typename Element<kLoad>::Storage;
  // Rows a page or more apart go in column_chunks.h's groups of rows, and so do 16-bit floats'
  // narrow tables: their groups are widened row by row first, so the chunks read the widened
  // copy, not the rows (32 to 96 float16 columns 1.1-2.2x, one thread of the dev VM; 128 and
  // more 0.7-1.3x, so they stay a row at a time).
  const bool in_groups = stride * sizeof(Storage) >= kPageBytes || (kDType != kLoad && width < 128);
  // 16-bit floats' row groups, widened (64 KiB).
  float widened_rows[kDType == kLoad ? 1 : kChunkRows * kColumnsPassWidth];
  // The NaN-free pass's extremes start at the first row (AddNanFreeFirst).
  const ValueT* first_row = rows > 0 ? Values<kDType, ValueT>(data, width, widened) : nullptr;
  AddNanFreeFirst<kDType, kG>(first_row, rows, width, t, [&](auto nan_free) {
    constexpr bool kNanFree = decltype(nan_free)::value;
    if (!in_groups) {
      AddRowByRow<kDType, kG, kNanFree>(data, stride, rows, width, widened, t);
      return;
    }
    ForEachChunk<kDType>(data, stride, rows, width, widened_rows,
                         [&](const LoadStorage* group, size_t group_stride, size_t count, size_t r0,
                             size_t c0, auto n) {
                           AddChunk<kLoad, kG, kNanFree, decltype(n)::value>(group, group_stride,
                                                                             count, r0, c0, t);
                         });
  });
  // The first NaN of each column that has one, found again (the block is in cache, and a NaN is
  // rare: the loop above keeps only the counts).
  if constexpr (!kInteger) {
    size_t with_nan = 0;
    for (size_t c = 0; c < width; ++c) with_nan += t.nans[c] != 0 ? 1 : 0;
    for (size_t r = 0; r < rows && with_nan > 0; ++r) {
      const ValueT* x = Values<kDType, ValueT>(data + r * stride, width, widened);
      for (size_t c = 0; c < width; ++c) {
        if (t.first_nan[c] < 0 && x[c] != x[c]) {
          t.first_nan[c] = static_cast<int32_t>(r);
          --with_nan;
        }
      }
    }
  }
}

template <DType kDType, Gathers kG>
void AddColumnsOf(const std::byte* bytes, size_t stride, size_t rows, size_t width,
                  uint64_t base_row, Stats* out) {
  using E = Element<kDType>;
  using Storage = typename E::Storage;
  constexpr bool kInteger = IsInteger(kDType);
  using Value = std::conditional_t<kInteger, int64_t, typename E::Value>;
  using Sum = std::conditional_t<kInteger, int64_t, double>;
  const auto* data = reinterpret_cast<const Storage*>(bytes);
  Tile<Value, Sum> t;
  ClearTile(width, t);
  bool added = false;
#if defined(__AVX512BW__)
  // 16-bit floats' sums, moments or one extreme, in strips (half_strips.h) unless a NaN shows.
  if constexpr (kStripsServe<kDType, kG>) {
    added = rows >= kStripsLeastRows && rows <= kStripsMostRows && width > 0 &&
            AddHalfStrips<kDType, kG>(data, stride, rows, width, t);
    if (!added) ClearTile(width, t);
  }
#endif
  if (!added) AddBlock<kDType, kG>(data, stride, rows, width, t);
  for (size_t c = 0; c < width; ++c) {
    Stats block;
    block.integer = kInteger;
    block.count = rows;
    block.nan_count = t.nans[c];
    block.first_nan = t.first_nan[c] < 0 ? -1 : static_cast<int64_t>(base_row + t.first_nan[c]);
    // The column's sum, as the mean divides it (int64's exact one, rounded once).
    double total = static_cast<double>(t.sum[c]);
    if constexpr (kDType == DType::kInt64) {
      const Int128 exact = FromHalves(t.sum[c], t.low[c]);
      SetExactSum(exact, block);
      total = static_cast<double>(exact);
    } else if constexpr (kInteger) {
      block.int_sum = t.sum[c];
    } else {
      block.sum = t.sum[c];
    }
    block.sum_squares = t.squares[c];
    if constexpr (kG.prod && kInteger) {
      SetIntProduct(t.int_prod[c], t.prod[c], t.prod_exponent[c], data + c, stride, rows, block);
    } else if constexpr (kG.prod) {
      int exponent = 0;
      block.prod = std::frexp(t.prod[c], &exponent);
      block.prod_exponent = t.prod_exponent[c] + exponent;
    }
    if constexpr (kG.min || kG.max) {  // one not gathered keeps index -1: none
      const auto at = [&](int32_t r) { return r < 0 ? int64_t{-1} : int64_t(base_row + r); };
      block.min_index = at(t.least_at[c]);
      block.max_index = at(t.most_at[c]);
      if constexpr (kInteger) {
        block.int_min = t.least[c];
        block.int_max = t.most[c];
      } else {
        block.min = t.least[c];
        block.max = t.most[c];
      }
    }
    if constexpr (kG.moments) {
      const uint64_t valid = block.valid();
      if (valid > 0) {
        const auto n = static_cast<double>(valid);
        block.mean = total / n;
        double m2 = t.s2[c] - t.s1[c] * (t.s1[c] / n);
        if (!std::isfinite(m2) && std::isfinite(block.mean)) {  // overflowed about the shift
          m2 = SquaredDeviations<kDType>(data + c, stride, rows, block.mean);
        }
        // Rounding can take it below 0 (NaN passes); an infinite mean has none.
        block.m2 = !std::isfinite(block.mean) ? 0.0 : m2 < 0 ? 0.0 : m2;
      } else {
        block.mean = block.m2 = 0.0;
      }
    }
    // A fresh column (a row of ReduceRowsAsync's, a table's first block) takes the block as it is.
    out[c] = out[c].count == 0 ? block : MergeStats(out[c], block);
  }
}

// One op's own copy (SUM, MIN, MAX, VAR, SUM_SQUARES, PROD), else one for every op but
// SUM_SQUARES and PROD with or without the moments, else (SUM_SQUARES or PROD with others, rare)
// one with everything.
template <DType kDType>
void AddColumnsFor(const StatsNeeds& needs, const std::byte* data, size_t stride, size_t rows,
                   size_t width, uint64_t base_row, Stats* out) {
  const auto args = std::forward_as_tuple(data, stride, rows, width, base_row, out);
  const bool extremes = needs.min || needs.max;
  constexpr Gathers kEverything{.min = true, .max = true, .moments = true, .squares = true};
  constexpr Gathers kExtremes{.min = true, .max = true};
  if (needs.prod) {
    if (!needs.sum && !needs.sum_squares && !needs.moments && !extremes) {
      return std::apply(AddColumnsOf<kDType, Gathers{.sum = false, .prod = true}>, args);
    }
    constexpr Gathers kAll{
        .min = true, .max = true, .moments = true, .squares = true, .prod = true};
    return std::apply(AddColumnsOf<kDType, kAll>, args);
  }
  if (needs.sum_squares) {
    // SUM_SQUARES alone (or with the sums) gathers the squares and sums only.
    if (!extremes && !needs.moments) {
      return std::apply(AddColumnsOf<kDType, Gathers{.squares = true}>, args);
    }
    return std::apply(AddColumnsOf<kDType, kEverything>, args);
  }
  if (!needs.sum && !needs.moments && needs.min != needs.max) {
    if (needs.min)
      return std::apply(AddColumnsOf<kDType, Gathers{.sum = false, .min = true}>, args);
    return std::apply(AddColumnsOf<kDType, Gathers{.sum = false, .max = true}>, args);
  }
  if (!extremes) {
    if (needs.moments) return std::apply(AddColumnsOf<kDType, Gathers{.moments = true}>, args);
    return std::apply(AddColumnsOf<kDType, Gathers{}>, args);
  }
  if (needs.moments) {
    return std::apply(AddColumnsOf<kDType, Gathers{.min = true, .max = true, .moments = true}>,
                      args);
  }
  return std::apply(AddColumnsOf<kDType, kExtremes>, args);
}

}  // namespace

void AddColumns(DType dtype, const StatsNeeds& needs, const std::byte* data, size_t stride,
                size_t rows, size_t width, uint64_t base_row, Stats* out) {
  switch (dtype) {
    case DType::kFloat32:
      return AddColumnsFor<DType::kFloat32>(needs, data, stride, rows, width, base_row, out);
    case DType::kFloat16:
      return AddColumnsFor<DType::kFloat16>(needs, data, stride, rows, width, base_row, out);
    case DType::kBFloat16:
      return AddColumnsFor<DType::kBFloat16>(needs, data, stride, rows, width, base_row, out);
    case DType::kFloat64:
      return AddColumnsFor<DType::kFloat64>(needs, data, stride, rows, width, base_row, out);
    case DType::kInt32:
      return AddColumnsFor<DType::kInt32>(needs, data, stride, rows, width, base_row, out);
    case DType::kInt64:
      return AddColumnsFor<DType::kInt64>(needs, data, stride, rows, width, base_row, out);
  }
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES
