// The sums pass (block_reduce.h): the NaN count, the sum, the sum of squares and the moments in
// one loop over the block, each in kLanes independent accumulators so the loop vectorizes
// without reassociating anything the source does not.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__AVX__)
#include <immintrin.h>
#endif

#include "kernels/cpu/block_reduce.h"
#include "kernels/cpu/element_load.h"
#include "kernels/cpu/int_sums.h"
#include "kernels/cpu/narrow_keys.h"
#include "kernels/cpu/sum_lanes.h"

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {
namespace {

// AddCompensated (stats.h), repeated here: an inline function shared by the instruction sets'
// copies of this file could be linked as the wrong one.
void AddTwoSum(double b, double* hi, double* lo) {
  const double a = *hi;
  const double s = a + b;
  *lo += std::fabs(a) >= std::fabs(b) ? (a - s) + b : (b - s) + a;
  *hi = s;
}

// One lane's accumulations (ValueT double) or one vector of lanes' (ValueT Lanes).
template <typename ValueT>
struct Sums {
  ValueT nan{}, sum{}, lo{}, squares{}, s1{}, s2{};
};

// Adds x to the accumulations: NaN counted and skipped; float64 sums get a branch-free two-sum
// (Knuth's) whose error terms collect in `lo`. kNanFree: x holds no NaN (FloatSums checks), so
// the masks are left out: each of them would keep every value, and the count would add only 0.
// Without kS1 the moments leave the deviations' sum to the caller (FloatSums, from the sum);
// kSumByFma adds the sum as AddByFma.
template <bool kSum, bool kSquares, bool kMoments, bool kCompensated, bool kNanFree = false,
          bool kS1 = true, bool kSumByFma = false, typename ValueT>
__attribute__((always_inline)) inline void Accumulate(const ValueT& x, double shift,
                                                      Sums<ValueT>& a) {
  const ValueT one = ValueT{} + 1.0;
  const auto valid = x == x;
  if constexpr (!kNanFree) a.nan += one - Keep(valid, one);
  const ValueT v = kNanFree ? x : Keep(valid, x);
  if constexpr (kSum && kCompensated) {
    const ValueT s = a.sum + v;
    const ValueT b = s - a.sum;
    a.lo += (a.sum - (s - b)) + (v - b);
    a.sum = s;
  } else if constexpr (kSum && kSumByFma) {
    a.sum = AddByFma(a.sum, v);
  } else if constexpr (kSum) {
    a.sum += v;
  }
  if constexpr (kSquares) a.squares += v * v;
  if constexpr (kMoments) {
    const ValueT d = kNanFree ? Deviation(x, shift) : Keep(valid, Deviation(x, shift));
    if constexpr (kS1) a.s1 = AddOnMultiplyPipe(a.s1, d);
    a.s2 += d * d;
  }
}

// Floats: float16/bfloat16/float32 elements sum in float64 lanes exactly to far below the
// result's precision (2^16 elements of 24 bits); float64 ones compensated. 16-bit elements
// convert in the loop, one group of kLanes at a time, over the whole block (PROD's path reduces
// them widened, in tiles: block_reduce.cc). With kExtremes the pass also finds the extremes (a
// five-op request reads its block once): a float64 group of kLanes elements is compared with the
// extremes so far, and a run of groups that beats them (rarely, on most data) is scanned in index
// order with a strict compare, so ties keep the first occurrence; float32 elements keep each
// run's least and most lanes, and a run that beats the extremes is settled (the same first
// occurrences); 16-bit ones compare a run's keys once (narrow_keys.h). Except for float64, the
// loop leaves the NaN masks out (kNanFree): a NaN stays in the sums it enters, so they tell at
// the end of a chunk whether it held one; if it did, the chunk runs again with the masks (most
// chunks hold none). Measured (one core,
// 256 MiB, AVX2, this 2-core AMD EPYC VM): float32 SUM 19.6 -> 27 GB/s, VAR 12.0 -> 25; the
// five-op request of float32 10.1 -> 18.8, float16 5.4 -> 6.9, bfloat16 6.5 -> 8.4.
template <DType kDType, bool kSum, bool kSquares, bool kMoments, bool kExtremes>
void FloatSums(const typename Element<kDType>::Storage* data, size_t size,
               const ExtremesWanted& wanted, Stats& stats) {
  using E = Element<kDType>;
  constexpr bool kCompensated = kDType == DType::kFloat64;
  // float16's sum in the lanes is exact (each of the 16 accumulators of a pair's two groups adds
  // at most 8192 of a block's 128Ki elements, multiples of 2^-24 below 2^16: below 2^29, 53
  // bits), so the deviations' sum follows from it, rounded only where the lanes merge (where the
  // lanes' own sums of deviations could round at every add): an add a group fewer for requests
  // of both (the five-op one, in L2, one core of the AMD VM: AVX-512 7.1 -> 8.1 G elements/s,
  // AVX2 4.7 -> 5.2).
  constexpr bool kS1 = !(kSum && kMoments && kDType == DType::kFloat16);
  const size_t start = kMoments || kExtremes ? FirstValid<kDType>(data, size) : size;
  const double shift = kMoments && start < size ? double{E::Load(data[start])} : 0.0;
  double least = start < size ? double{E::Load(data[start])} : 0.0, most = least;
  size_t least_at = start, most_at = start;
  const auto scan = [&](size_t from, size_t to) {
    for (size_t k = from; k < to; ++k) {
      const double value = E::Load(data[k]);
      if (value < least) {
        least = value;
        least_at = k;
      }
      if (value > most) {
        most = value;
        most_at = k;
      }
    }
  };
  // float64 compares its lanes with the extremes; float32 elements keep the run's own extremes
  // (Least/Most, which skip NaN as the compares do), compared once a run; 16-bit ones compare the
  // run's keys once.
  constexpr bool kWideExtremes = kExtremes && kDType == DType::kFloat64;
  constexpr bool kKeyExtremes = kExtremes && sizeof(typename E::Storage) == 2;
  static_assert(kKeyRun == kExtremesRun);  // a run's keys compared at once
  constexpr bool kNarrowExtremes = kExtremes && kDType == DType::kFloat32;
  // A run of float32 groups that beat the extremes: its least and most elements (reduced from
  // the run's Least/Most lanes) replace them at their first occurrence, the element that the
  // scan's strict compares would keep (the first equal to the new extreme: a tie of -0 and +0
  // keeps the earlier as there). Scanning the run element by element cost a tile of uniform
  // float16 (whose extremes change ~log(8192) times) about a third of the five-op request's time,
  // when 16-bit elements took this path.
  const auto settle = [&](const Floats8& low, const Floats8& high, size_t from, size_t to) {
    float lanes_low[kLanes], lanes_high[kLanes];
    std::memcpy(lanes_low, &low, sizeof(lanes_low));
    std::memcpy(lanes_high, &high, sizeof(lanes_high));
    float run_min = lanes_low[0], run_max = lanes_high[0];
    for (size_t lane = 1; lane < kLanes; ++lane) {
      run_min = lanes_low[lane] < run_min ? lanes_low[lane] : run_min;
      run_max = lanes_high[lane] > run_max ? lanes_high[lane] : run_max;
    }
    const auto first = [&](float target) {
      for (size_t k = from; k < to; k += kLanes) {
        Floats8 group;
        LoadFloats<kDType>(data + k, group);
        int32_t equal[kLanes];
        const auto mask = group == target;
        std::memcpy(equal, &mask, sizeof(equal));
        for (size_t lane = 0; lane < kLanes; ++lane) {
          if (equal[lane] != 0) return k + lane;
        }
      }
      return to;  // not reached: the target is one of the run's elements
    };
    if (run_min < least) {
      least_at = first(run_min);
      least = E::Load(data[least_at]);
    }
    if (run_max > most) {
      most_at = first(run_max);
      most = E::Load(data[most_at]);
    }
  };
  Lanes least_lanes = Lanes{} + least, most_lanes = Lanes{} + most;
  Floats8 least_floats = Floats8{} + static_cast<float>(least);
  Floats8 most_floats = Floats8{} + static_cast<float>(most);
  // 16-bit elements run in pairs of groups, each group of a pair with its own accumulators,
  // merged at the end: two chains of adds where one made the loop wait on each add's latency (the
  // SUM request of float16 in L2, one core of the AMD VM: 22.6 -> 36 GB/s). Every instruction set
  // pairs alike, so the same bits.
  constexpr bool kPaired = sizeof(typename E::Storage) == 2;
  Floats8 run_least = least_floats, run_most = most_floats;
  // 16-bit elements: a run's keys (narrow_keys.h) compared once a run, from L1.
  KeyExtremes keyed;
  if (kKeyExtremes && start < size) {
    keyed = StartKeys<kDType>(reinterpret_cast<const uint16_t*>(data), start, true, true);
  }
  Sums<Lanes> pair[2][kVectors];
  size_t i = 0;
  int64_t first_nan = -1;
  Lanes x;
  // Without a sum to carry it, a NaN is noted by a compare (with one, it stays in the sum).
  constexpr bool kCarried = kSum || kSquares || kMoments;
  decltype(Floats8{} != Floats8{}) nan_seen{};
  Mask passes{};
  size_t run = 0;  // where the groups whose compares `passes` holds begin
  // float16's exact sum (above) added by FMA (x * 1 + y, the same rounding): off the add pipes,
  // which the conversions, the extremes and s2 share; exact either way, so the same bits (in L2,
  // one core of the AMD VM, the five-op request: AVX-512 8.2 -> 8.8, AVX2 5.1 -> 5.5 G
  // elements/s; 256 MiB, AVX-512: 10.8 -> 11.3 GB/s).
  constexpr bool kSumByFma = !kS1;
  const auto step = [&]<bool kOdd, bool kNanFree>(size_t i) __attribute__((always_inline)) {
    Floats8 group{};  // float64 loads none (Clang warns of passing it uninitialized)
    Floats4 halves[2];
    if constexpr (sizeof(typename E::Storage) == 2 && kWidth == 4) {
      // Converted in halves, joined only for the compares (if any: else the join is dead code).
      LoadFloatHalves<kDType>(data + i, halves[0], halves[1]);
      group = __builtin_shufflevector(halves[0], halves[1], 0, 1, 2, 3, 4, 5, 6, 7);
    } else if constexpr (kDType != DType::kFloat64) {
      LoadFloats<kDType>(data + i, group);
    }
    if constexpr (kNanFree && !kCarried) nan_seen |= group != group;
    if constexpr (kNarrowExtremes) {
      Least(group, run_least);
      Most(group, run_most);
    }
    for (size_t v = 0; v < kVectors; ++v) {
      LoadLanes<kDType>(data + i, group, halves, v, x);
      Accumulate<kSum, kSquares, kMoments, kCompensated, kNanFree, kS1, kSumByFma>(x, shift,
                                                                                   pair[kOdd][v]);
      if constexpr (kWideExtremes) passes |= (x < least_lanes) | (x > most_lanes);
    }
    if (kExtremes && i + kLanes - run == kExtremesRun) {
      if (kWideExtremes && AnyLane(passes)) {
        scan(run, i + kLanes);
        least_lanes = Lanes{} + least;
        most_lanes = Lanes{} + most;
      }
      if constexpr (kKeyExtremes) {
        const auto* bits = reinterpret_cast<const uint16_t*>(data);
        if (RunPasses(bits + run, keyed)) ScanKeys<kDType>(bits, run, i + kLanes, keyed);
      }
      if (kNarrowExtremes && AnyLane((run_least < least_floats) | (run_most > most_floats))) {
        settle(run_least, run_most, run, i + kLanes);
        least_floats = Floats8{} + static_cast<float>(least);
        most_floats = Floats8{} + static_cast<float>(most);
      }
      passes = Mask{};
      run_least = least_floats;
      run_most = most_floats;
      run = i + kLanes;
    }
  };
  const auto groups = [&]<bool kNanFree>(size_t to) __attribute__((always_inline)) {
    if constexpr (kPaired) {
      for (; i + 2 * kLanes <= to; i += 2 * kLanes) {
        step.template operator()<false, kNanFree>(i);
        step.template operator()<true, kNanFree>(i + kLanes);
      }
    }
    for (; i + kLanes <= to; i += kLanes) step.template operator()<false, kNanFree>(i);
  };
  // A NaN element makes its lane's sums NaN (so may +inf and -inf in one lane: the chunk then
  // runs again with the masks, which gives the same bits).
  const auto poisoned = [&] {
    if constexpr (kCarried) {
      Mask nan{};
      for (const auto& vectors : pair) {
        for (const Sums<Lanes>& a : vectors) {
          const Lanes& carrier = kSum ? a.sum : kMoments ? a.s1 : a.squares;
          nan |= carrier != carrier;
        }
      }
      return AnyLane(nan);
    } else {
      return AnyLane(nan_seen);
    }
  };
  if constexpr (kCompensated) {
    groups.template operator()<false>(size);
  } else {
    // The NaN-free loop a chunk at a time, each chunk that held a NaN again with the masks from
    // the accumulations before it (the extremes are the same either way: their compares skip NaN,
    // and a second look at a chunk moves none). A chunk of a few runs' worth keeps the second
    // look in L1/L2 and rare: a NaN in 100,000 elements sent half the 64Ki-element blocks of a
    // float16 VAR request round twice.
    // The first poisoned chunk also gives the first NaN (ReducePasses would look from the start).
    constexpr size_t kChunk = 8192;
    static_assert(kChunk % kExtremesRun == 0 && kChunk % (2 * kLanes) == 0);  // runs and pairs
    for (size_t chunk = 0; chunk < size; chunk += kChunk) {
      const size_t to = std::min(size, chunk + kChunk);
      if (poisoned()) {
        // A lane NaN from the masked loop itself (+inf and -inf in it): the masks from here on.
        groups.template operator()<false>(to);
        continue;
      }
      Sums<Lanes> before[2][kVectors];
      std::memcpy(before, pair, sizeof(pair));
      groups.template operator()<true>(to);
      if (!poisoned()) continue;
      if (first_nan < 0) {  // (a lane of +inf and -inf is poisoned too, with no NaN)
        const int64_t at = FirstNanOf<kDType>(data + chunk, to - chunk);
        if (at >= 0) first_nan = static_cast<int64_t>(chunk) + at;
      }
      std::memcpy(pair, before, sizeof(pair));
      nan_seen = decltype(nan_seen){};
      i = run = chunk;
      run_least = least_floats;
      run_most = most_floats;
      groups.template operator()<false>(to);
    }
  }
  Sums<Lanes>* vectors = pair[0];
  if constexpr (kPaired) {
    for (size_t v = 0; v < kVectors; ++v) {
      const Sums<Lanes>& odd = pair[1][v];
      vectors[v].nan += odd.nan;
      vectors[v].sum += odd.sum;
      vectors[v].squares += odd.squares;
      vectors[v].s1 += odd.s1;
      vectors[v].s2 += odd.s2;
    }
  }
  if constexpr (kKeyExtremes) {
    if (start < size) {
      ScanKeys<kDType>(reinterpret_cast<const uint16_t*>(data), run, size, keyed);
      least_at = keyed.least_at;
      most_at = keyed.most_at;
      least = E::Load(data[least_at]);
      most = E::Load(data[most_at]);
    }
  } else if (kExtremes) {
    scan(run, size);
  }
  double nan[kLanes], sum[kLanes], lo[kLanes], squares[kLanes], s1[kLanes], s2[kLanes];
  for (size_t lane = 0; lane < kLanes; ++lane) {
    const Sums<Lanes>& vector = vectors[lane / kWidth];
    const size_t at = lane % kWidth;
    Sums<double> one{vector.nan[at],     vector.sum[at], vector.lo[at],
                     vector.squares[at], vector.s1[at],  vector.s2[at]};
    if (i + lane < size) {
      Accumulate<kSum, kSquares, kMoments, kCompensated, false, kS1>(
          double{E::Load(data[i + lane])}, shift, one);
    }
    nan[lane] = one.nan;
    sum[lane] = one.sum;
    lo[lane] = one.lo;
    squares[lane] = one.squares;
    s1[lane] = one.s1;
    s2[lane] = one.s2;
  }

  double nan_total = 0, hi = 0, lo_total = 0, squares_total = 0, s1_total = 0, s2_total = 0;
  for (size_t lane = 0; lane < kLanes; ++lane) {
    nan_total += nan[lane];
    if constexpr (kCompensated) {
      AddTwoSum(sum[lane], &hi, &lo_total);
      lo_total += lo[lane];
    } else {
      hi += sum[lane];
    }
    squares_total += squares[lane];
    s1_total += s1[lane];
    s2_total += s2[lane];
  }
  stats.nan_count = static_cast<uint64_t>(nan_total);
  if (first_nan >= 0) stats.first_nan = static_cast<int64_t>(wanted.base_index) + first_nan;
  if constexpr (kSum) {
    stats.sum = hi;
    stats.sum_lo = std::isfinite(hi) ? lo_total : 0.0;  // an infinite lane's terms are NaN
  }
  if constexpr (kSquares) stats.sum_squares = squares_total;
  if constexpr (kMoments) {
    const double valid = static_cast<double>(size) - nan_total;
    if constexpr (!kS1) s1_total = hi - valid * shift;
    SetMoments(shift, s1_total, s2_total, valid, stats);
    if (kDType == DType::kFloat64 && !std::isfinite(stats.m2) && std::isfinite(stats.mean)) {
      stats.m2 = SquaredDeviations<kDType>(data, 1, size, stats.mean);  // inf only if these are
    }
  }
  if (kExtremes && start < size) {
    if (wanted.min) {
      stats.min = least;
      stats.min_index = static_cast<int64_t>(wanted.base_index + least_at);
    }
    if (wanted.max) {
      stats.max = most;
      stats.max_index = static_cast<int64_t>(wanted.base_index + most_at);
    }
  }
}

// kKey's bits: sum, sum_squares, moments, extremes.
template <DType kDType, int kKey>
void RunSums(int key, const std::byte* data, size_t size, const ExtremesWanted& wanted,
             Stats& stats) {
  if constexpr (kKey < 16) {
    if (key != kKey) return RunSums<kDType, kKey + 1>(key, data, size, wanted, stats);
    const auto* elements = reinterpret_cast<const typename Element<kDType>::Storage*>(data);
    constexpr bool kSum = kKey & 1, kSquares = kKey & 2, kMoments = kKey & 4;
    if constexpr (IsInteger(kDType)) {
      IntSums<kDType, kSum, kSquares, kMoments, (kKey & 8) != 0>(elements, size, wanted, stats);
    } else {
      FloatSums<kDType, kSum, kSquares, kMoments, (kKey & 8) != 0>(elements, size, wanted, stats);
    }
  }
}

}  // namespace

void AddSums(DType dtype, const StatsNeeds& needs, bool fuse_extremes, const std::byte* data,
             size_t size, uint64_t base_index, Stats& stats) {
  const bool extremes = fuse_extremes && (needs.min || needs.max);
  const int key = (needs.sum ? 1 : 0) | (needs.sum_squares ? 2 : 0) | (needs.moments ? 4 : 0) |
                  (extremes ? 8 : 0);
  const ExtremesWanted wanted{needs.min, needs.max, base_index};
  DispatchLoadDType(dtype,
                    [&]<DType kDType>() { RunSums<kDType, 0>(key, data, size, wanted, stats); });
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES
