#include "common/reduction/stats.h"

#include <cmath>

#include "common/reduction/int_product.h"

namespace gpureduce {

StatsNeeds NeedsOf(std::span<const Op> ops) {
  StatsNeeds needs;
  for (Op op : ops) {
    switch (NanFormOf(op)) {
      case Op::kSum:
      case Op::kMean:
        needs.sum = true;
        break;
      case Op::kSumSquares:
        needs.sum_squares = true;
        break;
      case Op::kProd:
        needs.prod = true;
        break;
      case Op::kMin:
      case Op::kArgMin:
        needs.min = true;
        break;
      case Op::kMax:
      case Op::kArgMax:
        needs.max = true;
        break;
      case Op::kVar:
      case Op::kStd:
        needs.moments = true;
        break;
      default:
        break;
    }
  }
  return needs;
}

namespace {

// Whether `right`'s extreme goes before `left`'s: the smaller (or larger) value, and between
// equal values the lower index. Pieces of a stream spread over several GPUs merge in part order,
// not index order, so a tie is decided by the index rather than by the side it is on.
template <typename T>
bool Replaces(bool less, T left, int64_t left_index, T right, int64_t right_index) {
  if (left == right) return right_index < left_index;
  return less ? right < left : right > left;
}

// One side of the extremes (the min's or the max's fields): `right`'s goes into `out` where it
// goes first.
struct ExtremeFields {
  bool less;
  double Stats::*value;
  int64_t Stats::*int_value;
  int64_t Stats::*index;
};

void MergeExtreme(const ExtremeFields& side, const Stats& right, Stats& out) {
  if (right.*side.index < 0) return;
  const bool take = out.*side.index < 0 ||
                    (out.integer ? Replaces(side.less, out.*side.int_value, out.*side.index,
                                            right.*side.int_value, right.*side.index)
                                 : Replaces(side.less, out.*side.value, out.*side.index,
                                            right.*side.value, right.*side.index));
  if (!take) return;
  out.*side.value = right.*side.value;
  out.*side.int_value = right.*side.int_value;
  out.*side.index = right.*side.index;
}

void MergeExtremes(const Stats& right, Stats& out) {
  MergeExtreme({true, &Stats::min, &Stats::int_min, &Stats::min_index}, right, out);
  MergeExtreme({false, &Stats::max, &Stats::int_max, &Stats::max_index}, right, out);
}

void MergeProducts(const Stats& right, Stats& out) {
  int exponent = 0;
  out.prod = std::frexp(out.prod * right.prod, &exponent);
  out.prod_exponent += right.prod_exponent + exponent;
  // Wrapping multiplication is associative, so the pieces' wrapped products multiply to the
  // sequential one. The exact product's range by int_product.h's states (a side out for good
  // keeps it out, unless a factor is 0, which the zero flag answers).
  const IntProductRange range = RangeOfProduct(out.int_prod, out.int_prod_two_to_63, right.int_prod,
                                               right.int_prod_two_to_63);
  out.int_prod_overflow = out.int_prod_overflow || right.int_prod_overflow || range.leaves;
  out.int_prod_two_to_63 = !out.int_prod_overflow && range.two_to_63;
  out.int_prod = out.int_prod * right.int_prod;
  out.int_prod_zero = out.int_prod_zero || right.int_prod_zero;
}

void MergeMoments(const Stats& left, const Stats& right, Stats& out) {
  const double n_left = static_cast<double>(left.valid());
  const double n_right = static_cast<double>(right.valid());
  if (n_right == 0) return;
  if (n_left == 0) {
    out.mean = right.mean;
    out.m2 = right.m2;
    return;
  }
  const double n = n_left + n_right;
  const double delta = right.mean - left.mean;
  out.mean = left.mean + delta * (n_right / n);
  out.m2 = left.m2 + right.m2 + delta * delta * (n_left * n_right / n);
}

}  // namespace

Stats MergeStats(const Stats& left, const Stats& right) {
  if (right.count == 0) return left;
  if (left.count == 0) return right;
  Stats out = left;
  out.count = left.count + right.count;
  out.nan_count = left.nan_count + right.nan_count;
  if (right.first_nan >= 0 && (out.first_nan < 0 || right.first_nan < out.first_nan)) {
    out.first_nan = right.first_nan;
  }

  AddCompensated(right.sum, &out.sum, &out.sum_lo);
  out.sum_lo += right.sum_lo;
  const bool carried = __builtin_add_overflow(left.int_sum, right.int_sum, &out.int_sum);
  out.int_sum_wraps =
      left.int_sum_wraps + right.int_sum_wraps + (carried ? (right.int_sum < 0 ? -1 : 1) : 0);
  out.sum_squares = left.sum_squares + right.sum_squares;

  MergeProducts(right, out);
  MergeExtremes(right, out);
  MergeMoments(left, right, out);
  return out;
}

}  // namespace gpureduce
