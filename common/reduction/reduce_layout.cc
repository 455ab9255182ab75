#include "common/reduction/reduce_layout.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/reduction/op_name.h"
#include "common/reduction/op_result.h"
#include "common/reduction/stats.h"

namespace gpureduce {
namespace {

constexpr uint64_t kMost = std::numeric_limits<uint64_t>::max();

// a * b, or false where it passes 2^64.
bool MultiplyInto(uint64_t b, uint64_t* a) {
  if (b != 0 && *a > kMost / b) return false;
  *a *= b;
  return true;
}

std::string Tuple(std::span<const uint64_t> values) {
  return absl::StrCat("(", absl::StrJoin(values, ", "), values.size() == 1 ? ",)" : ")");
}

// MIN, MAX and the arg ops, which NumPy refuses over no elements.
bool ExtremeOp(Op op) {
  const Op base = NanFormOf(op);
  return base == Op::kMin || base == Op::kMax || base == Op::kArgMin || base == Op::kArgMax ||
         base == Op::kNanArgMin || base == Op::kNanArgMax;
}

}  // namespace

absl::StatusOr<ReduceLayout> ReduceLayout::ForAxes(std::span<const uint64_t> shape,
                                                   std::span<const int32_t> axes, bool keepdims,
                                                   std::span<const Op> ops) {
  const auto rank = static_cast<int64_t>(shape.size());
  std::vector<bool> reduced(shape.size(), axes.empty());
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("spec.axes[", i, "] is ", axes[i], ", out of range for the ", rank,
                       "-d spec.shape ", Tuple(shape), " (axes ", -rank, "..", rank - 1, ")"));
    }
    if (reduced[axis]) {
      return absl::InvalidArgumentError(absl::StrCat("spec.axes[", i, "] (", axes[i],
                                                     ") repeats axis ", axis, "; name each once"));
    }
    reduced[axis] = true;
  }
  const bool every_axis = std::all_of(reduced.begin(), reduced.end(), [](bool r) { return r; });
  if (axes.size() > 1 && !every_axis) {
    for (Op op : ops) {
      if (OpReturnsIndex(op)) {
        return absl::InvalidArgumentError(
            absl::StrCat(OpName(op),
                         " reduces one axis or every axis (NumPy's takes an int axis), but "
                         "spec.axes names ",
                         axes.size(), " of spec.shape's ", rank));
      }
    }
  }

  // The extents other than 0 must multiply below 2^64, as NumPy's must fit its index type: a 0
  // elsewhere would hide an overflow of the outputs' count (and of what a reducer sets aside).
  uint64_t nonzero = 1;
  for (uint64_t extent : shape) {
    if (!MultiplyInto(extent == 0 ? 1 : extent, &nonzero)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "spec.shape ", Tuple(shape), " is too large: its extents multiply past 2^64"));
    }
  }
  ReduceLayout layout;
  layout.count_ = 1;
  layout.outputs_ = 1;
  uint64_t reduced_extent = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    layout.count_ *= shape[i];  // none of these products passes `nonzero`
    if (reduced[i]) {
      reduced_extent *= shape[i];  // bounded by the count's product, or 0 with it
      if (keepdims) layout.result_shape_.push_back(1);
    } else {
      layout.outputs_ *= shape[i];
      layout.result_shape_.push_back(shape[i]);
    }
    if (shape[i] == 1) continue;  // a 1-length axis changes nothing
    if (!layout.groups_.empty() && layout.groups_.back().reduced == reduced[i]) {
      layout.groups_.back().extent *= shape[i];
    } else {
      layout.groups_.push_back({shape[i], reduced[i]});
    }
  }
  // NumPy refuses a reduction over a 0-length axis for an op without identity even where no
  // output is left (np.zeros((0, 0)).min(axis=0)).
  layout.has_empty_output_ = reduced_extent == 0;
  std::vector<uint64_t> axis_list;
  for (size_t i = 0; i < reduced.size(); ++i) {
    if (reduced[i]) axis_list.push_back(i);
  }
  layout.description_ = absl::StrCat("shape ", Tuple(shape), " along axes ", Tuple(axis_list));
  return layout;
}

absl::StatusOr<ReduceLayout> ReduceLayout::ForSegments(std::span<const uint64_t> lengths) {
  ReduceLayout layout;
  layout.segmented_ = true;
  layout.bounds_.reserve(lengths.size() + 1);
  layout.bounds_.push_back(0);
  for (size_t i = 0; i < lengths.size(); ++i) {
    if (lengths[i] > kMost - layout.count_) {
      return absl::InvalidArgumentError(
          absl::StrCat("spec.segments: the lengths up to [", i, "] add up past 2^64"));
    }
    layout.count_ += lengths[i];
    layout.bounds_.push_back(layout.count_);
    if (lengths[i] == 0) layout.has_empty_output_ = true;
  }
  layout.outputs_ = lengths.size();
  layout.result_shape_ = {layout.outputs_};
  layout.description_ = absl::StrCat(lengths.size(), " segments");
  return layout;
}

uint64_t ReduceLayout::open_outputs() const {
  if (count_ == 0) return 0;  // no element arrives: nothing is held (Finish answers the outputs)
  if (segmented_) return 1;
  // From the first reduced group in: the kept extents inside it stay open until it ends.
  uint64_t open = 1;
  bool inside = false;
  for (const AxisGroup& group : groups_) {
    inside = inside || group.reduced;
    if (inside && !group.reduced) open *= group.extent;
  }
  return open;
}

std::string ReduceLayout::Describe() const { return description_; }

absl::Status CheckEmptyOutputs(const ReduceLayout& layout, std::span<const Op> ops, DType dtype,
                               double ddof) {
  if (!layout.has_empty_output()) return absl::OkStatus();
  Stats empty;
  empty.integer = IsInteger(dtype);
  for (Op op : ops) {
    if (FinalizeOp(op, dtype, ddof, empty).ok()) continue;
    std::string where;
    if (layout.segmented()) {
      const std::vector<uint64_t>& bounds = layout.bounds();
      size_t s = 0;
      while (bounds[s + 1] != bounds[s]) ++s;
      where = absl::StrCat("spec.segments[", s, "] is empty");
    } else {
      where = absl::StrCat("the ", layout.Describe(), " reduces 0 elements into each output");
    }
    const bool numpy_raises = ExtremeOp(op);
    return absl::InvalidArgumentError(absl::StrCat(
        where, " and ", OpName(op), " answers no empty reduction (",
        numpy_raises ? "NumPy raises" : "as a full reduction of no elements is refused",
        "); sum, prod, their nan forms, nanmean, var, std and their nan forms answer one"));
  }
  return absl::OkStatus();
}

}  // namespace gpureduce
