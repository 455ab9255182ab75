#include "client/cli/running_reference.h"

#include <cmath>

namespace gpureduce::cli {

void RunningReference::Add(absl::Span<const float> chunk) {
  const bool less = op_ == v1::MIN || op_ == v1::ARGMIN;
  for (size_t i = 0; i < chunk.size(); ++i) {
    const long double x = chunk[i];
    switch (op_) {
      case v1::SUM_SQUARES:
        sum_ += x * x;
        abs_sum_ += x * x;
        break;
      case v1::PROD:
        product_ *= x;
        break;
      case v1::MIN:
      case v1::MAX:
      case v1::ARGMIN:
      case v1::ARGMAX:
        if (saw_nan_) break;
        if (std::isnan(chunk[i])) {
          saw_nan_ = true;
          extreme_ = chunk[i];
          index_ = static_cast<int64_t>(count_ + i);
        } else if (index_ < 0 || (less ? chunk[i] < extreme_ : chunk[i] > extreme_)) {
          extreme_ = chunk[i];
          index_ = static_cast<int64_t>(count_ + i);
        }
        break;
      default:  // SUM, MEAN
        sum_ += x;
        abs_sum_ += std::fabs(x);
    }
  }
  count_ += chunk.size();
}

double RunningReference::value() const {
  switch (op_) {
    case v1::PROD: return static_cast<double>(product_);
    case v1::MIN:
    case v1::MAX:
    case v1::ARGMIN:
    case v1::ARGMAX: return extreme_;
    case v1::MEAN: return static_cast<double>(sum_ / count_);
    default: return static_cast<double>(sum_);
  }
}

double RunningReference::scale() const {
  if (op_ == v1::MEAN) return static_cast<double>(abs_sum_ / count_);
  if (op_ == v1::SUM || op_ == v1::SUM_SQUARES) return static_cast<double>(abs_sum_);
  return std::fabs(value());
}

}  // namespace gpureduce::cli
