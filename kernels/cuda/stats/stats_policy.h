#pragma once

// Tuning and dispatch facts of the stats kernel (ReduceStatsInto: any dtype, several ops in one
// read), as data. Plain C++ with no dependencies, so the scratch layout (host) includes it too.

#include <cstddef>
#include <cstdint>

#include "kernels/scratch_layout.h"

namespace gpureduce::kernels {

// Threads per block and 16-byte loads per thread per tile: single_pass's sm_90 shape (a 16 KiB
// contiguous tile, all its loads in flight before the first use), whatever the dtype.
inline constexpr uint32_t kStatsBlockThreads = 256;
inline constexpr uint32_t kStatsVectorsPerThread = 4;

// The grid is at most the blocks resident at once (each loops over its tiles): a stats block's
// epilogue (its threads' states merged, about 100 bytes each) costs more than single_pass's, so
// fewer, longer blocks, at most kStatsMaxBlocks (scratch_layout.h).

// The groups of accumulations a kernel is instantiated for; a request's StatsNeeds map to the
// leanest instantiation that covers them (CanonicalStatsFlags). Element count, NaN count and
// first NaN are always kept.
enum StatsFlag : unsigned {
  kStatsSum = 1u,         // SUM, MEAN (also with either of the next two)
  kStatsSumSquares = 2u,  // SUM_SQUARES
  kStatsMoments = 4u,     // VAR, STD: Chan's (n, mean, m2)
  kStatsExtremes = 8u,    // MIN and MAX with their first indices (ARG ops)
  kStatsProd = 16u,       // PROD: float mantissa and exponent apart; integer wrapped + flags
};

inline constexpr unsigned kStatsAll =
    kStatsSum | kStatsSumSquares | kStatsMoments | kStatsExtremes | kStatsProd;

// The twelve instantiations per dtype: sums in {none, sum, sum + squares, sum + moments, all
// three} x extremes {no, yes}; a product alone, or with anything else everything.
inline constexpr unsigned kStatsInstantiations[] = {
    0u,
    kStatsSum,
    kStatsSum | kStatsSumSquares,
    kStatsSum | kStatsMoments,
    kStatsSum | kStatsSumSquares | kStatsMoments,
    kStatsExtremes,
    kStatsSum | kStatsExtremes,
    kStatsSum | kStatsSumSquares | kStatsExtremes,
    kStatsSum | kStatsMoments | kStatsExtremes,
    kStatsSum | kStatsSumSquares | kStatsMoments | kStatsExtremes,
    kStatsProd,
    kStatsAll,
};

constexpr unsigned CanonicalStatsFlags(bool sum, bool sum_squares, bool prod, bool min, bool max,
                                       bool moments) {
  unsigned sums = 0;
  if (sum || sum_squares || moments) sums |= kStatsSum;
  if (sum_squares) sums |= kStatsSumSquares;
  if (moments) sums |= kStatsMoments;
  const unsigned extremes = (min || max) ? kStatsExtremes : 0u;
  if (prod) return (sums | extremes) != 0 ? kStatsAll : kStatsProd;
  return sums | extremes;
}

}  // namespace gpureduce::kernels
