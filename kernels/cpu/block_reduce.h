#pragma once

// The `cpu` kernel's passes over one in-cache block (internal to kernels/cpu; ReduceBlock in
// kernels/reduce.h runs them). A request reads its block once from memory: the first pass
// brings it into L2 (a task's block is at most 512 KiB), the others reread it there. Each pass
// is one loop templated on the dtype and on the accumulations it gathers, so a request pays
// only for what its ops need.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/reduction/dtype.h"
#include "common/reduction/stats.h"
#include "kernels/reduce.h"

// The passes are compiled once per instruction set (kernels/CMakeLists.txt), each copy in its own
// namespace: `baseline` (any x86-64: SSE2) and, on x86-64, `avx2` (AVX2, F16C, FMA, BMI2; FMA
// only as x * 1 + y, one rounding as the add's) and `avx512` (those and AVX-512 F/BW/DQ/VL: the
// kLanes float64 lanes in one register), all giving the same bits. ReduceBlock picks one when the
// process starts.
#ifndef GPUREDUCE_CPU_PASSES
#define GPUREDUCE_CPU_PASSES baseline
#endif

namespace gpureduce::kernels::cpu {

// Independent accumulators per loop: hides add latency and fills the vector registers.
inline constexpr size_t kLanes = 8;
// Rows and segments go through the columns pass this many at a time (transposed: each a column).
inline constexpr size_t kColumnsWidth = 256;
// The short runs pass takes runs (rows, segments) of kShortestRun to kLongestRun elements: shorter
// ones fill too few of its lanes (rows of 2: 0.5-0.8x the columns pass and the sums in place, one
// thread of the dev VM), longer ones are ReduceBlock's. Up to kLongestRun, eight runs' lanes
// combined at once (combine_eight.h), it beats ReduceBlock for every dtype, one thread of the dev
// VM: rows of 512 float32 SUM 1.5x, MIN 1.4x, float64 SUM 2.2x; rows of 256 float64 1.8-1.9x.
inline constexpr size_t kShortestRun = 4;
inline constexpr size_t kLongestRun = 512;
// The columns pass takes at most this many columns at once: a table's rows are read this wide,
// a run of whole rows up to 4 KiB of float32, and its accumulators stay in L1 for sums alone.
inline constexpr size_t kColumnsPassWidth = 1024;
// Rows this far apart or more are "paged": the columns pass takes them in groups of rows, and a
// table of them goes in tiles (columns_reduce.cc).
inline constexpr size_t kPageBytes = 4096;

struct Passes {
  // The sums: nan_count always (floats), and sum/sum_lo or int_sum/int_sum_wraps, sum_squares,
  // and mean/m2 (moments) as `needs` asks; with `fuse_extremes`, the extremes of the block too
  // (as add_extremes finds them, indices from base_index). `data`
  // holds `size` elements of `dtype` (16-bit floats convert to float32 as the loops load them).
  void (*add_sums)(DType dtype, const StatsNeeds& needs, bool fuse_extremes, const std::byte* data,
                   size_t size, uint64_t base_index, Stats& stats);
  // min/int_min and min_index (if `min`), max likewise: the first occurrence of the extreme
  // among the non-NaN elements, indices counted from `base_index`; nan_count (floats).
  void (*add_extremes)(DType dtype, bool min, bool max, const std::byte* data, size_t size,
                       uint64_t base_index, Stats& stats);
  // prod/prod_exponent of the non-NaN elements, and with `count_nans` (for a request of no sums
  // or extremes) nan_count; or int_prod, int_prod_overflow, int_prod_zero, int_prod_two_to_63.
  void (*add_product)(DType dtype, const std::byte* data, size_t size, bool count_nans,
                      Stats& stats);
  // float16 (else bfloat16) elements to float32, exactly (the columns pass's rows).
  void (*widen)(bool half, const uint16_t* in, size_t size, float* out);
  // A block of `rows` rows of a row-major table, `width` (at most kColumnsPassWidth) columns from
  // `data`, rows `stride` elements apart: each column's Stats of the block (the accumulations
  // `needs` asks for; row r's index base_row + r) merged after out[c]. Every dtype and op (its
  // callers add their own rules: rows_reduce.cc sends int64 rows only where they want extremes,
  // segmented_reduce.cc no integer segments).
  void (*add_columns)(DType dtype, const StatsNeeds& needs, const std::byte* data, size_t stride,
                      size_t rows, size_t width, uint64_t base_row, Stats* out);
  // `runs` runs of `data`'s elements, run r from element bounds[r] - base to bounds[r + 1] - base
  // (each of kShortestRun to kLongestRun elements), each to its own Stats in out[r] (the
  // accumulations `needs` asks for, indices from the run's start; float sums in float64 lanes,
  // float64's compensated as ReduceBlock's (sum_lo), the narrower floats' not (sum_lo 0); int32
  // sums exact, int64's as 32-bit halves, its extremes in int64 lanes). PROD alone, and no int64
  // SUM_SQUARES (RunsPassTakes).
  void (*add_runs)(DType dtype, const StatsNeeds& needs, const std::byte* data,
                   const uint64_t* bounds, uint64_t base, size_t runs, Stats* out);
  // The same runs' answers of `direct`'s ops (the runs' outputs first, first + 1, ...: op k's at
  // direct.ops[k].out + (first + r) * its result size), each the bytes EncodeAnswers writes from
  // the run's Stats, eight runs at a time where the copy can (AVX-512; PROD alone too), up to
  // eight that hold a run an op refuses (NANARGMIN of NaN alone) or whose int64 SUM wraps (its
  // Stats count it), or an integer PROD that leaves int64 where the op has no `overflows` counter
  // (else counted there); of int64, one op but SUM_SQUARES; one extreme op over 16-bit floats every
  // run, 32 at a time, up to the first 32 that hold a NaN (key_runs.h). Returns how many runs from
  // the first it answered; the caller reduces the others. The runs must be their outputs' whole
  // inputs (a run cut from a longer one goes by its Stats).
  size_t (*answer_runs)(DType dtype, const DirectAnswers& direct, uint64_t first,
                        const std::byte* data, const uint64_t* bounds, uint64_t base, size_t runs);
};

// int64 runs with moments or extremes go through the pass up to this length; longer ones keep
// ReduceBlock's one pass or the columns pass (one thread of the dev VM, VAR against ReduceBlock:
// rows of 16 to 128 2.2-3.7x, segments of 32 and 64 2.2x and 1.6x, of 128 0.8x, rows of 256 and
// 512 0.5x; MIN against the columns pass, transposed (rows), or ReduceBlock (segments): rows of
// 16 and 128 1.5x and 1.3x, segments of 16 and 128 2.1x and 1.5x, rows of 256 1.0x, 512 0.6x,
// segments of 256 0.94x, of 512 0.6x). SUM alone goes up to kLongestRun (1.2-3.9x).
inline constexpr uint64_t kLongestInt64LooksRun = 128;

// The longest run of `request` the short runs pass reduces (0: none): PROD alone only
// (run_products.h), and no int64 SUM_SQUARES (its float64 squares are left to ReduceBlock).
constexpr uint64_t RunsPassLongest(const StatsRequest& request) {
  const StatsNeeds& n = request.needs;
  if (n.prod) return !n.sum && !n.sum_squares && !n.moments && !n.min && !n.max ? kLongestRun : 0;
  if (request.dtype != DType::kInt64) return kLongestRun;
  if (n.sum_squares) return 0;
  return n.moments || n.min || n.max ? kLongestInt64LooksRun : kLongestRun;
}

// Whether the short runs pass reduces runs of `length` elements of `request`.
constexpr bool RunsPassTakes(const StatsRequest& request, uint64_t length) {
  return length >= kShortestRun && length <= RunsPassLongest(request);
}

namespace baseline {
extern const Passes kPasses;
}
namespace avx2 {
extern const Passes kPasses;  // defined where the build has it (GPUREDUCE_CPU_HAVE_AVX2)
void AddExtremes(DType dtype, bool min, bool max, const std::byte* data, size_t size,
                 uint64_t base_index, Stats& stats);  // the AVX-512 copy's too
}  // namespace avx2
namespace avx512 {
extern const Passes kPasses;  // likewise
void AddSums(DType dtype, const StatsNeeds& needs, bool fuse_extremes, const std::byte* data,
             size_t size, uint64_t base_index, Stats& stats);  // its own, at 512 bits
}  // namespace avx512

// This compilation's copy of the passes (kPasses holds them).
namespace GPUREDUCE_CPU_PASSES {
void AddSums(DType dtype, const StatsNeeds& needs, bool fuse_extremes, const std::byte* data,
             size_t size, uint64_t base_index, Stats& stats);
void AddExtremes(DType dtype, bool min, bool max, const std::byte* data, size_t size,
                 uint64_t base_index, Stats& stats);
void AddProduct(DType dtype, const std::byte* data, size_t size, bool count_nans, Stats& stats);
void AddColumns(DType dtype, const StatsNeeds& needs, const std::byte* data, size_t stride,
                size_t rows, size_t width, uint64_t base_row, Stats* out);
void AddRuns(DType dtype, const StatsNeeds& needs, const std::byte* data, const uint64_t* bounds,
             uint64_t base, size_t runs, Stats* out);
size_t AnswerRuns(DType dtype, const DirectAnswers& direct, uint64_t first, const std::byte* data,
                  const uint64_t* bounds, uint64_t base, size_t runs);
}  // namespace GPUREDUCE_CPU_PASSES

// The fastest passes this CPU runs.
const Passes& ChosenPasses();

// Every copy of the passes this CPU runs, the baseline first and ChosenPasses last.
std::vector<const Passes*> RunnablePasses();

// RunnablePasses, and where the AVX-512 copy runs, that copy with its own 8-byte sums too (which
// its table gives to the AVX2 copy on AMD's CPUs): every path a CPU may take, for tests.
std::vector<Passes> EveryPassesPath();

// ReduceBlock with the given passes (tests compare them).
Stats ReduceBlockWith(const Passes& passes, const StatsRequest& request,
                      std::span<const std::byte> bytes, uint64_t base_index);

}  // namespace gpureduce::kernels::cpu
