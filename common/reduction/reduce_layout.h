#pragma once

// How an array request's elements map to its outputs (issue 23): NumPy's reduction of a C-order
// shape along some axes, or consecutive segments of the payload. The shape is normalized once:
// 1-length axes dropped, neighbouring axes that are both reduced (or both kept) merged, so that
// (4096, 1024) along axis 1 is "keep 4096, reduce 1024" and (8, 1, 3, 5) along (0, 2) is "reduce
// 24, keep 5" (the 1 dropped, 8 and 3 then neighbours). Plain C++ and abseil: the server builds
// one at its edge, the runtime reduces by it.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/reduction/dtype.h"
#include "common/reduction/op.h"

namespace gpureduce {

// A run of merged axes: all reduced, or all kept.
struct AxisGroup {
  uint64_t extent = 1;
  bool reduced = false;
};

class ReduceLayout {
 public:
  // `shape` in C order, the `axes` to reduce (negative from the end; empty: every axis),
  // `keepdims` as NumPy's. INVALID_ARGUMENT naming spec.shape or spec.axes for an axis out of
  // range or repeated, a product past 2^64, or an arg op given several axes.
  static absl::StatusOr<ReduceLayout> ForAxes(std::span<const uint64_t> shape,
                                              std::span<const int32_t> axes, bool keepdims,
                                              std::span<const Op> ops);
  // One output per segment of the given lengths (spec.segments).
  static absl::StatusOr<ReduceLayout> ForSegments(std::span<const uint64_t> lengths);

  uint64_t count() const { return count_; }      // elements the payload must carry
  uint64_t outputs() const { return outputs_; }  // results per op
  const std::vector<uint64_t>& result_shape() const { return result_shape_; }

  bool segmented() const { return segmented_; }
  // Segments: segment s is elements [bounds()[s], bounds()[s + 1]).
  const std::vector<uint64_t>& bounds() const { return bounds_; }
  // Axes: the normalized shape, outermost first, kept and reduced groups alternating (empty for
  // a 0-d array or one of only 1-length axes). Every element of a shape with a 0 extent is absent
  // (count() 0); groups() then still describes the outputs.
  const std::vector<AxisGroup>& groups() const { return groups_; }

  // The outputs a reduction in C order holds open at once: what a stream must keep an
  // accumulator for (a shape reduced along its last axes finishes each output before the next;
  // an array of no elements holds none).
  uint64_t open_outputs() const;
  // Whether some output reduces no element (an empty segment), or a reduced axis has length 0.
  bool has_empty_output() const { return has_empty_output_; }
  // What the payload of `outputs` reductions is, for messages: "shape (4096, 1024) along axes
  // (1)" or "2 segments".
  std::string Describe() const;

 private:
  uint64_t count_ = 0;
  uint64_t outputs_ = 0;
  bool segmented_ = false;
  bool has_empty_output_ = false;
  std::vector<uint64_t> result_shape_;
  std::vector<uint64_t> bounds_;
  std::vector<AxisGroup> groups_;
  std::string description_;
};

// Refuses a layout whose empty outputs `ops` cannot answer (MIN of an empty segment): NumPy
// raises there. Checked before any data is read.
absl::Status CheckEmptyOutputs(const ReduceLayout& layout, std::span<const Op> ops, DType dtype,
                               double ddof);

}  // namespace gpureduce
