// The product pass (block_reduce.h). Floats: kChains independent chains of kLanes lanes, each
// lane's product a mantissa and an exponent apart (product_lanes.h), 16-bit elements converted as
// they load, and the NaN counted where no other pass counts them. Integers: NumPy's wrapped
// product, and whether the exact one left int64.

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels/cpu/block_reduce.h"
#include "kernels/cpu/element_load.h"
#include "kernels/cpu/product_lanes.h"
#include "kernels/cpu/sum_lanes.h"

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {
namespace {

// Groups of kLanes multiplied into chains of their own: one chain waited on its multiplies'
// latency (and counting the NaN took a sums pass of its own).
constexpr size_t kChains = 4;
constexpr size_t kStep = kChains * kLanes;

// Lane l of the block's product takes elements l, l + kStep, ... (the last few elements, past
// the last whole step, one each into lanes 0, 1, ...); the lanes then multiply in order.
template <DType kDType>
void FloatProduct(const typename Element<kDType>::Storage* data, size_t size, bool count_nans,
                  Stats& stats) {
  constexpr size_t kFactors = kProductFactors<kDType>;
  Lanes prod[kChains][kVectors];
  Mask exponent[kChains][kVectors] = {};
  Mask nans[kChains][kVectors] = {};
  for (auto& chain : prod) {
    for (Lanes& p : chain) p = Lanes{} + 1.0;
  }
  const auto multiply = [&](size_t i, size_t chain) __attribute__((always_inline)) {
    MultiplyGroup<kDType>(data + i, prod[chain], exponent[chain], nans[chain]);
  };
  const auto normalize = [&] __attribute__((always_inline)) {
    for (size_t chain = 0; chain < kChains; ++chain) {
      for (size_t v = 0; v < kVectors; ++v) Normalize(prod[chain][v], exponent[chain][v]);
    }
  };
  size_t i = 0;
  for (; i + kStep * kFactors <= size; i += kStep * kFactors) {
    for (size_t k = 0; k < kFactors; ++k) {
      for (size_t chain = 0; chain < kChains; ++chain)
        multiply(i + k * kStep + chain * kLanes, chain);
    }
    normalize();
  }
  for (; i + kStep <= size; i += kStep) {
    for (size_t chain = 0; chain < kChains; ++chain) multiply(i + chain * kLanes, chain);
    normalize();
  }

  double lane_prod[kStep];
  int64_t lane_exponent[kStep];
  int64_t nan_count = 0;
  for (size_t chain = 0; chain < kChains; ++chain) {
    for (size_t v = 0; v < kVectors; ++v) {
      for (size_t k = 0; k < kWidth; ++k) {
        const size_t lane = chain * kLanes + v * kWidth + k;
        lane_prod[lane] = prod[chain][v][k];
        lane_exponent[lane] = exponent[chain][v][k];
        nan_count += nans[chain][v][k];
      }
    }
  }
  for (size_t lane = 0; i < size; ++i, ++lane) {
    const double x = Element<kDType>::Load(data[i]);
    nan_count += x != x ? 1 : 0;
    MultiplyFactor<kDType>(x, lane_prod[lane], lane_exponent[lane]);
    Normalize(lane_prod[lane], lane_exponent[lane]);
  }
  double total = 1.0;
  int64_t total_exponent = 0;
  for (size_t lane = 0; lane < kStep; ++lane) {
    int exponent_of_product = 0;
    total = std::frexp(total * lane_prod[lane], &exponent_of_product);
    total_exponent += exponent_of_product + lane_exponent[lane];
  }
  stats.prod = total;
  stats.prod_exponent = total_exponent;
  if (count_nans) stats.nan_count += static_cast<uint64_t>(nan_count);
}

// Wrapping multiplication is associative, so lanes multiply to the sequential wrapped product;
// the exact product leaves int64 exactly when a partial one does, unless a factor is 0 (every
// other factor has magnitude >= 1, so partial products only grow).
template <DType kDType>
void IntProduct(const typename Element<kDType>::Storage* data, size_t size, Stats& stats) {
  constexpr size_t kIntLanes = 4;  // multiplies with an overflow check do not vectorize
  int64_t prod[kIntLanes] = {1, 1, 1, 1};
  bool overflow = false, zero = false;
  size_t i = 0;
  for (; i + kIntLanes <= size; i += kIntLanes) {
    for (size_t lane = 0; lane < kIntLanes; ++lane) {
      const int64_t x = data[i + lane];
      zero |= x == 0;
      overflow |= __builtin_mul_overflow(prod[lane], x, &prod[lane]);
    }
  }
  for (size_t lane = 0; i < size; ++i, ++lane) {
    zero |= data[i] == 0;
    overflow |= __builtin_mul_overflow(prod[lane], int64_t{data[i]}, &prod[lane]);
  }
  int64_t total = 1;
  for (int64_t lane_prod : prod) overflow |= __builtin_mul_overflow(total, lane_prod, &total);
  stats.int_prod = static_cast<uint64_t>(total);
  stats.int_prod_overflow = overflow;
  stats.int_prod_zero = zero;
}

}  // namespace

void AddProduct(DType dtype, const std::byte* data, size_t size, bool count_nans, Stats& stats) {
  DispatchLoadDType(dtype, [&]<DType kDType>() {
    const auto* elements = reinterpret_cast<const typename Element<kDType>::Storage*>(data);
    if constexpr (IsInteger(kDType)) {
      IntProduct<kDType>(elements, size, stats);
    } else {
      FloatProduct<kDType>(elements, size, count_nans, stats);
    }
  });
}

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES
