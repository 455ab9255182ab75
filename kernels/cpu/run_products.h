#pragma once

// The short runs pass's products (runs_pass.cc; PROD alone): each run's element e in float64
// lane e % kLanes, whole groups of kLanes as vectors, each lane's product a mantissa and an
// exponent apart, integers' wrapped beside their magnitudes (product_lanes.h), the lanes then
// multiplied in one order. Where PROD went through ReduceBlock a run at a time (its set-up and
// its 32 lanes' frexp calls per run), and through the columns pass transposed (one thread of the
// dev VM, 64 MiB, rows of 16: float32 0.27 -> 3.8 GB/s, float16 0.13 -> 1.0, float64 0.51 -> 4.5;
// rows of 128: float32 1.3 -> 10.1). Included by runs_pass.cc only, in its namespace.

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/block_reduce.h"
#include "kernels/cpu/element_load.h"
#include "kernels/cpu/product_lanes.h"
#include "kernels/cpu/run_lanes.h"
#include "kernels/cpu/sum_lanes.h"

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {

// Eight lanes' products (each in [0.5, 1) or 0, inf, NaN) multiplied in CombineEight's order
// (combine_eight.h), ((l0 l4)(l2 l6))((l1 l5)(l3 l7)), their exponents added into `exponent`: at
// least 2^-8, so no renormalizing between them.
inline double ProductOfEight(const double* p, const int64_t* e, int64_t& exponent) {
  exponent += ((e[0] + e[4]) + (e[2] + e[6])) + ((e[1] + e[5]) + (e[3] + e[7]));
  return ((p[0] * p[4]) * (p[2] * p[6])) * ((p[1] * p[5]) * (p[3] * p[7]));
}

// One float run's product in kLanes lanes (element e in lane e % kLanes; the last, partial group
// padded with ones), every lane renormalized, and each lane's NaN count.
struct RunProductLanes {
  Lanes prod[kVectors];
  Mask exponent[kVectors];
  Mask nans[kVectors];
};

// The element 1 of a dtype, as stored.
template <DType kDType>
inline constexpr
    typename Element<kDType>::Storage kOne = kDType == DType::kFloat16
                                                 ? typename Element<kDType>::Storage(0x3c00)
                                             : kDType == DType::kBFloat16
                                                 ? typename Element<kDType>::Storage(0x3f80)
                                                 : typename Element<kDType>::Storage(1);

// Calls multiply(group) for each group of kLanes elements of a run of `length` at x (the last,
// partial one copied and padded with ones) and normalize() after every kFactors of them and at
// the end (kNormalize), so that a lane holds at most kFactors factors unnormalized. kGroups > 0:
// the run is that many whole groups (eight_runs.h's SharedGroups), so the loop unrolls.
template <DType kDType, size_t kGroups, bool kNormalize, typename MultiplyF, typename NormalizeF>
__attribute__((always_inline)) inline void ForEachGroupOfRun(
    const typename Element<kDType>::Storage* x, size_t length, MultiplyF multiply,
    NormalizeF normalize) {
  using Storage = typename Element<kDType>::Storage;
  constexpr size_t kFactors = kProductFactors<kDType>;
  if constexpr (kGroups > 0) length = kGroups * kLanes;
  const size_t whole = length / kLanes * kLanes;
  size_t factors = 0;
#pragma GCC unroll 16
  for (size_t i = 0; i < whole; i += kLanes) {
    multiply(x + i);
    if (kNormalize && ++factors == kFactors) {
      normalize();
      factors = 0;
    }
  }
  if (kGroups == 0 && whole < length) {  // at most kFactors factors in a lane with it
    Storage last[kLanes];
    for (Storage& one : last) one = kOne<kDType>;
    std::memcpy(last, x + whole, (length - whole) * sizeof(Storage));
    multiply(static_cast<const Storage*>(last));
  }
  static_assert(kNormalize || kGroups > 0, "runs of whole groups alone");
  if constexpr (kNormalize) normalize();
}

// A float run's lanes. kNanFree: no NaN counted or skipped (MultiplyGroup's). Without kNormalize,
// the lanes are never renormalized (their exponents 0; the caller has checked that they stay
// normal).
template <DType kDType, size_t kGroups = 0, bool kNanFree = false, bool kNormalize = true>
__attribute__((always_inline)) inline RunProductLanes LanesOfRun(
    const typename Element<kDType>::Storage* x, size_t length) {
  RunProductLanes l;
  for (size_t v = 0; v < kVectors; ++v) {
    l.prod[v] = Lanes{} + 1.0;
    l.exponent[v] = l.nans[v] = Mask{};
  }
  ForEachGroupOfRun<kDType, kGroups, kNormalize>(
      x, length,
      [&l](const typename Element<kDType>::Storage* group) {
        MultiplyGroup<kDType, kNanFree>(group, l.prod, l.exponent, l.nans);
      },
      [&l] {
        for (size_t v = 0; v < kVectors; ++v) Normalize(l.prod[v], l.exponent[v]);
      });
  return l;
}

// One run's Stats: count, NaN count, first NaN and product, the lanes multiplied in
// CombineEight's order (combine_eight.h: eight runs' answers at once, runs_answers.cc).
template <DType kDType>
__attribute__((always_inline)) inline void RunProduct(const typename Element<kDType>::Storage* x,
                                                      size_t length, Stats& out) {
  const RunProductLanes l = LanesOfRun<kDType>(x, length);
  double p[kLanes];
  int64_t e[kLanes], n[kLanes];
  std::memcpy(p, l.prod, sizeof(p));
  std::memcpy(e, l.exponent, sizeof(e));
  std::memcpy(n, l.nans, sizeof(n));
  int64_t total_exponent = 0;
  double total = ProductOfEight(p, e, total_exponent);
  Normalize(total, total_exponent);
  const int64_t nan_count = ((n[0] + n[4]) + (n[2] + n[6])) + ((n[1] + n[5]) + (n[3] + n[7]));
  out = Stats{};
  out.count = length;
  out.nan_count = static_cast<uint64_t>(nan_count);
  out.first_nan = nan_count > 0 ? FirstNanOf<kDType>(x, length) : -1;
  out.prod = total;
  out.prod_exponent = total_exponent;
}

// One run of integers' product in kLanes lanes (element e in lane e % kLanes; the last, partial
// group padded with ones): NumPy's wrapped product beside the exact one's magnitude, each lane's
// renormalized (product_lanes.h's MultiplyIntGroup).
struct RunIntProductLanes {
  Mask wrapped[kVectors];
  Lanes magnitude[kVectors];
  Mask exponent[kVectors];
};

// An integer run's lanes; kGroups as ForEachGroupOfRun's.
template <DType kDType, size_t kGroups = 0>
__attribute__((always_inline)) inline RunIntProductLanes IntLanesOfRun(
    const typename Element<kDType>::Storage* x, size_t length) {
  RunIntProductLanes l;
  for (size_t v = 0; v < kVectors; ++v) {
    l.wrapped[v] = Mask{} + 1;
    l.magnitude[v] = Lanes{} + 1.0;
    l.exponent[v] = Mask{};
  }
  ForEachGroupOfRun<kDType, kGroups, true>(
      x, length,
      [&l](const typename Element<kDType>::Storage* group) {
        MultiplyIntGroup<kDType>(group, l.wrapped, l.magnitude);
      },
      [&l] {
        for (size_t v = 0; v < kVectors; ++v) Normalize(l.magnitude[v], l.exponent[v]);
      });
  return l;
}

// One run of integers' Stats: count and products (wrapped, and whether the exact one left int64).
template <DType kDType>
__attribute__((always_inline)) inline void RunIntProduct(const typename Element<kDType>::Storage* x,
                                                         size_t length, Stats& out) {
  const RunIntProductLanes l = IntLanesOfRun<kDType>(x, length);
  double m[kLanes];
  int64_t e[kLanes];
  uint64_t w[kLanes];
  std::memcpy(m, l.magnitude, sizeof(m));
  std::memcpy(e, l.exponent, sizeof(e));
  std::memcpy(w, l.wrapped, sizeof(w));
  const uint64_t total = ((w[0] * w[4]) * (w[2] * w[6])) * ((w[1] * w[5]) * (w[3] * w[7]));
  int64_t total_exponent = 0;
  const double total_magnitude = ProductOfEight(m, e, total_exponent);
  out = Stats{};
  out.count = length;
  out.integer = true;
  SetIntProduct(total, total_magnitude, total_exponent, x, 1, length, out);
}

template <DType kDType>
void RunProducts(const std::byte* data, const uint64_t* bounds, uint64_t base, size_t runs,
                 Stats* out) {
  const auto* x = reinterpret_cast<const typename Element<kDType>::Storage*>(data);
  for (size_t r = 0; r < runs; ++r) {
    const auto* run = x + (bounds[r] - base);
    const uint64_t length = bounds[r + 1] - bounds[r];
    PrefetchAhead(run, length);
    if constexpr (IsInteger(kDType)) {
      RunIntProduct<kDType>(run, length, out[r]);
    } else {
      RunProduct<kDType>(run, length, out[r]);
    }
  }
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES
