// The product pass (block_reduce.h): kChains independent chains of kLanes lanes. Floats: each
// lane's product a mantissa and an exponent apart (product_lanes.h), 16-bit elements converted as
// they load, and the NaN counted where no other pass counts them. Integers: NumPy's wrapped
// product, and whether the exact one left int64 (from the magnitudes' product).

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
  stats.prod_exponent = 0;
  stats.prod = MultiplyInOrder(lane_prod, lane_exponent, kStep, stats.prod_exponent);
  if (count_nans) stats.nan_count += static_cast<uint64_t>(nan_count);
}

// Wrapping multiplication is associative, so the lanes multiply to the sequential wrapped
// product; their magnitudes (product_lanes.h) tell whether the exact one left int64, and where
// they cannot, the elements are multiplied again one at a time with the check.
template <DType kDType>
void IntProduct(const typename Element<kDType>::Storage* data, size_t size, Stats& stats) {
  constexpr size_t kFactors = kProductFactors<kDType>;
  Mask wrapped[kChains][kVectors];
  Lanes magnitude[kChains][kVectors];
  Mask exponent[kChains][kVectors] = {};
  for (size_t chain = 0; chain < kChains; ++chain) {
    for (size_t v = 0; v < kVectors; ++v) {
      wrapped[chain][v] = Mask{} + 1;
      magnitude[chain][v] = Lanes{} + 1.0;
    }
  }
  const auto normalize = [&] __attribute__((always_inline)) {
    for (size_t chain = 0; chain < kChains; ++chain) {
      for (size_t v = 0; v < kVectors; ++v) Normalize(magnitude[chain][v], exponent[chain][v]);
    }
  };
  size_t i = 0;
  for (; i + kStep * kFactors <= size; i += kStep * kFactors) {
    for (size_t k = 0; k < kFactors; ++k) {
      for (size_t chain = 0; chain < kChains; ++chain) {
        MultiplyIntGroup<kDType>(data + i + k * kStep + chain * kLanes, wrapped[chain],
                                 magnitude[chain]);
      }
    }
    normalize();
  }
  for (; i + kStep <= size; i += kStep) {
    for (size_t chain = 0; chain < kChains; ++chain) {
      MultiplyIntGroup<kDType>(data + i + chain * kLanes, wrapped[chain], magnitude[chain]);
    }
    normalize();
  }
  uint64_t total = 1;
  double lane_magnitude[kStep];
  int64_t lane_exponent[kStep];
  for (size_t chain = 0; chain < kChains; ++chain) {
    for (size_t v = 0; v < kVectors; ++v) {
      for (size_t k = 0; k < kWidth; ++k) {
        const size_t lane = chain * kLanes + v * kWidth + k;
        total *= static_cast<uint64_t>(wrapped[chain][v][k]);
        lane_magnitude[lane] = magnitude[chain][v][k];
        lane_exponent[lane] = exponent[chain][v][k];
      }
    }
  }
  for (size_t lane = 0; i < size; ++i, ++lane) {
    MultiplyIntFactor<kDType>(data[i], total, lane_magnitude[lane]);
    Normalize(lane_magnitude[lane], lane_exponent[lane]);
  }
  int64_t total_exponent = 0;
  const double total_magnitude =
      MultiplyInOrder(lane_magnitude, lane_exponent, kStep, total_exponent);
  SetIntProduct(total, total_magnitude, total_exponent, data, 1, size, stats);
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
