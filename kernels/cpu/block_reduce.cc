#include "kernels/cpu/block_reduce.h"

#include <cmath>
#include <cstddef>

namespace gpureduce::kernels::cpu {
namespace {

// Independent accumulators per loop: enough to hide add latency and fill two AVX lanes.
constexpr size_t kLanes = 8;

template <typename TransformT>
double SumBlock(std::span<const float> data, TransformT transform) {
  double acc[kLanes] = {};
  size_t i = 0;
  for (; i + kLanes <= data.size(); i += kLanes) {
    for (size_t lane = 0; lane < kLanes; ++lane) acc[lane] += transform(double{data[i + lane]});
  }
  for (size_t lane = 0; i < data.size(); ++i, ++lane) acc[lane] += transform(double{data[i]});
  double total = 0.0;
  for (double lane_sum : acc) total += lane_sum;
  return total;
}

double ProdBlock(std::span<const float> data) {
  double acc[kLanes] = {1, 1, 1, 1, 1, 1, 1, 1};
  size_t i = 0;
  for (; i + kLanes <= data.size(); i += kLanes) {
    for (size_t lane = 0; lane < kLanes; ++lane) acc[lane] *= double{data[i + lane]};
  }
  for (size_t lane = 0; i < data.size(); ++i, ++lane) acc[lane] *= double{data[i]};
  double total = 1.0;
  for (double lane_prod : acc) total *= lane_prod;
  return total;
}

// MIN/MAX: a branch-free select per element plus a separate NaN flag, so the loop vectorizes;
// NumPy's rule that any NaN makes the result NaN is applied once at the end.
template <bool kLess>
double ExtremeBlock(std::span<const float> data) {
  float best = data[0];
  bool saw_nan = false;
  for (float x : data) {
    best = kLess ? (x < best ? x : best) : (x > best ? x : best);
    saw_nan |= (x != x);
  }
  return saw_nan ? std::nan("") : double{best};
}

// ARGMIN/ARGMAX: first occurrence of the extreme; the first NaN ends the search.
template <bool kLess>
Partial ArgExtremeBlock(std::span<const float> data, uint64_t base_index) {
  float best = data[0];
  size_t best_at = 0;
  for (size_t i = 0; i < data.size(); ++i) {
    const float x = data[i];
    if (x != x) {
      best = x;
      best_at = i;
      break;
    }
    if (kLess ? x < best : x > best) {
      best = x;
      best_at = i;
    }
  }
  return Partial{double{best}, static_cast<int64_t>(base_index + best_at), data.size()};
}

}  // namespace

Partial ReduceBlock(Op op, std::span<const float> data, uint64_t base_index) {
  Partial out;
  out.count = data.size();
  if (data.empty()) return out;
  switch (op) {
    case Op::kSum:
    case Op::kMean:
      out.value = SumBlock(data, [](double x) { return x; });
      break;
    case Op::kSumSquares:
      out.value = SumBlock(data, [](double x) { return x * x; });
      break;
    case Op::kProd:
      out.value = ProdBlock(data);
      break;
    case Op::kMin:
      out.value = ExtremeBlock<true>(data);
      break;
    case Op::kMax:
      out.value = ExtremeBlock<false>(data);
      break;
    case Op::kArgMin:
      return ArgExtremeBlock<true>(data, base_index);
    case Op::kArgMax:
      return ArgExtremeBlock<false>(data, base_index);
  }
  return out;
}

}  // namespace gpureduce::kernels::cpu
