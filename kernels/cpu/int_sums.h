#pragma once

// The sums pass's loop over integer blocks (sum_pass.cc): the sum, the sum of squares, the
// moments and the extremes in one read. Included by sum_pass.cc only, in the passes' namespace,
// as sum_lanes.h.

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "common/reduction/stats.h"
#include "kernels/cpu/element_load.h"
#include "kernels/cpu/sum_lanes.h"

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {

// Integers: int32 elements sum exactly in int64 lanes; int64 ones as their unsigned low and
// signed high 32-bit halves (exact in 64 bits for 2^31 elements), which vectorizes where
// overflow-checked adds would not. Squares and moments in float64, as NumPy computes var. With
// kExtremes the extremes too, as the extremes pass finds them (first occurrences): the widened
// lanes of a run of kExtremesRun elements are compared with the extremes so far, and a run that
// beats them is scanned in index order with strict compares. A five-op request of int64 read its
// 512 KiB block twice, the second time from memory too (one core of the AMD VM, 256 MiB, AVX-512:
// 12.4 -> 26.6 GB/s fused; int32 19.2 -> 23.8).
//
// The lanes as vectors, as FloatSums keeps them: GCC 12 vectorized the loop over scalar lanes
// itself, but at 512 bits with shuffles between every step (one core, 64Ki int64 in L2: VAR at 4.5
// G elements/s with AVX2, 2.8 with AVX-512). Inlined into AddSums: compiled apart, the int32
// sum-and-moments copy went half scalar once the 16-bit keys were added.
template <DType kDType, bool kSum, bool kSquares, bool kMoments, bool kExtremes>
__attribute__((always_inline)) inline void IntSums(const typename Element<kDType>::Storage* data,
                                                   size_t size, const ExtremesWanted& wanted,
                                                   Stats& stats) {
  using Int = typename Element<kDType>::Storage;
  typedef Int Ints __attribute__((vector_size(kWidth * sizeof(Int))));
  typedef uint64_t Words __attribute__((vector_size(kWidth * sizeof(uint64_t))));
  constexpr bool kWide = kDType == DType::kInt64;
  const double shift = kMoments && size > 0 ? static_cast<double>(data[0]) : 0.0;  // none NaN
  Mask sum_vectors[kVectors] = {};
  Words low_vectors[kVectors] = {};
  Lanes squares_vectors[kVectors] = {}, s1_vectors[kVectors] = {}, s2_vectors[kVectors] = {};
  Int least = size > 0 ? data[0] : 0, most = least;
  size_t least_at = 0, most_at = 0;
  const auto scan = [&](size_t from, size_t to) {
    for (size_t k = from; k < to; ++k) {
      if (data[k] < least) {
        least = data[k];
        least_at = k;
      }
      if (data[k] > most) {
        most = data[k];
        most_at = k;
      }
    }
  };
  Mask least_lanes = Mask{} + least, most_lanes = Mask{} + most, passes{};
  size_t run = 0;  // where the groups whose compares `passes` holds begin
  size_t i = 0;
  for (; i + kLanes <= size; i += kLanes) {
    for (size_t v = 0; v < kVectors; ++v) {
      Ints x;
      std::memcpy(&x, data + i + v * kWidth, sizeof(x));
      const Mask wide = ToInt64(x);
      if constexpr (kExtremes) passes |= (wide < least_lanes) | (wide > most_lanes);
      if constexpr (kSum && kWide) {
        low_vectors[v] += reinterpret_cast<Words>(x) & 0xffffffffu;
        sum_vectors[v] += x >> 32;  // arithmetic shift: the high half, signed
      } else if constexpr (kSum) {
        sum_vectors[v] += wide;
      }
      if constexpr (kSquares || kMoments) {
        const Lanes value = ToDouble(x);
        if constexpr (kSquares) squares_vectors[v] += value * value;
        if constexpr (kMoments) {
          const Lanes d = value - shift;
          s1_vectors[v] += d;
          s2_vectors[v] += d * d;
        }
      }
    }
    if (kExtremes && i + kLanes - run == kExtremesRun) {
      if (AnyLane(passes)) {
        scan(run, i + kLanes);
        least_lanes = Mask{} + least;
        most_lanes = Mask{} + most;
      }
      passes = Mask{};
      run = i + kLanes;
    }
  }
  if constexpr (kExtremes) scan(run, size);
  int64_t sum[kLanes];
  uint64_t low[kLanes];
  double squares[kLanes], s1[kLanes], s2[kLanes];
  for (size_t lane = 0; lane < kLanes; ++lane) {
    const size_t v = lane / kWidth, at = lane % kWidth;
    sum[lane] = sum_vectors[v][at];
    low[lane] = low_vectors[v][at];
    squares[lane] = squares_vectors[v][at];
    s1[lane] = s1_vectors[v][at];
    s2[lane] = s2_vectors[v][at];
  }
  for (size_t lane = 0; i < size; ++i, ++lane) {
    const Int x = data[i];
    if constexpr (kSum && kWide) {
      low[lane] += static_cast<uint32_t>(x);
      sum[lane] += x >> 32;
    } else if constexpr (kSum) {
      sum[lane] += x;
    }
    const double value = static_cast<double>(x);
    squares[lane] += value * value;
    s1[lane] += value - shift;
    s2[lane] += (value - shift) * (value - shift);
  }

  Int128 exact = 0;
  double squares_total = 0, s1_total = 0, s2_total = 0;
  for (size_t lane = 0; lane < kLanes; ++lane) {
    exact += kWide ? FromHalves(sum[lane], low[lane]) : Int128{sum[lane]};
    squares_total += squares[lane];
    s1_total += s1[lane];
    s2_total += s2[lane];
  }
  if constexpr (kSum) SetExactSum(exact, stats);
  if constexpr (kSquares) stats.sum_squares = squares_total;
  if constexpr (kMoments) {
    SetMoments(shift, s1_total, s2_total, static_cast<double>(size), stats);
  }
  if (kExtremes && size > 0) {
    if (wanted.min) {
      stats.min = static_cast<double>(least);
      stats.int_min = least;
      stats.min_index = static_cast<int64_t>(wanted.base_index + least_at);
    }
    if (wanted.max) {
      stats.max = static_cast<double>(most);
      stats.int_max = most;
      stats.max_index = static_cast<int64_t>(wanted.base_index + most_at);
    }
  }
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES
