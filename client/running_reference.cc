#include "client/running_reference.h"

#include <cmath>

namespace gpureduce::client {
namespace {

// Sums of x (or x^2) and |x| over one chunk, in float64 over 8 independent lanes: the lanes
// break the add-latency chain a single long double accumulator had (about 4 ns per element,
// which made --verify the bottleneck of a stream). The error stays far below --verify's
// tolerance: at most about (n / 8) x 2^-53 x sum|x| for a chunk of n, 4e-12 x sum|x| for a
// 1 MiB chunk; the chunks' sums are then added in long double.
struct ChunkSums {
  double sum = 0;      // of x, or x^2
  double abs_sum = 0;  // of |x|, or x^2
};

template <bool kSquare>
ChunkSums SumChunk(absl::Span<const float> chunk) {
  constexpr size_t kLanes = 8;
  double lane_sum[kLanes] = {};
  double lane_abs[kLanes] = {};
  size_t i = 0;
  for (; i + kLanes <= chunk.size(); i += kLanes) {
    for (size_t k = 0; k < kLanes; ++k) {
      const double x = chunk[i + k];
      lane_sum[k] += kSquare ? x * x : x;
      lane_abs[k] += kSquare ? x * x : std::fabs(x);
    }
  }
  for (; i < chunk.size(); ++i) {
    const double x = chunk[i];
    lane_sum[0] += kSquare ? x * x : x;
    lane_abs[0] += kSquare ? x * x : std::fabs(x);
  }
  ChunkSums sums;
  for (size_t k = 0; k < kLanes; ++k) {
    sums.sum += lane_sum[k];
    sums.abs_sum += lane_abs[k];
  }
  return sums;
}

}  // namespace

void RunningReference::Add(absl::Span<const float> chunk) {
  switch (op_) {
    case v1::PROD:
      // Kept in long double element by element: its exponent range outlasts float64's.
      for (const float x : chunk) product_ *= x;
      break;
    case v1::MIN:
    case v1::MAX:
    case v1::ARGMIN:
    case v1::ARGMAX: {
      const bool less = op_ == v1::MIN || op_ == v1::ARGMIN;
      for (size_t i = 0; i < chunk.size() && !saw_nan_; ++i) {
        if (std::isnan(chunk[i])) {
          saw_nan_ = true;
          extreme_ = chunk[i];
          index_ = static_cast<int64_t>(count_ + i);
        } else if (index_ < 0 || (less ? chunk[i] < extreme_ : chunk[i] > extreme_)) {
          extreme_ = chunk[i];
          index_ = static_cast<int64_t>(count_ + i);
        }
      }
      break;
    }
    default: {  // SUM, MEAN, SUM_SQUARES
      const ChunkSums sums =
          op_ == v1::SUM_SQUARES ? SumChunk<true>(chunk) : SumChunk<false>(chunk);
      sum_ += sums.sum;
      abs_sum_ += sums.abs_sum;
    }
  }
  count_ += chunk.size();
}

double RunningReference::value() const {
  switch (op_) {
    case v1::PROD:
      return static_cast<double>(product_);
    case v1::MIN:
    case v1::MAX:
    case v1::ARGMIN:
    case v1::ARGMAX:
      return extreme_;
    case v1::MEAN:
      return static_cast<double>(sum_ / count_);
    default:
      return static_cast<double>(sum_);
  }
}

double RunningReference::scale() const {
  if (op_ == v1::MEAN) return static_cast<double>(abs_sum_ / count_);
  if (op_ == v1::SUM || op_ == v1::SUM_SQUARES) return static_cast<double>(abs_sum_);
  return std::fabs(value());
}

}  // namespace gpureduce::client
