#pragma once

// An array request's layout as a client states it (issue 23): NumPy's axes of a C-order shape, or
// consecutive segments of the payload. The CLI and gpureduce-load parse their flags into one,
// check it before anything is sent (in the flags' words: --shape, --axis, --segments), put it in
// the spec, and know from it what shape each answer must have.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::client {

struct ArrayLayout {
  std::vector<uint64_t> shape;  // set: reduce along `axes` of this C-order shape
  std::vector<int32_t> axes;    // NumPy's axis: negative from the end; empty: every axis
  bool keepdims = false;
  std::vector<uint64_t> segments;  // set, instead of a shape: one output per segment

  // Whether this is an array request at all (else: a full reduction, one scalar per op).
  bool array() const { return !shape.empty() || !segments.empty(); }
};

// "31,1000003" or "31 1000003": non-negative integers separated by commas and/or whitespace (a
// trailing comma is allowed, "(31, 7)" too). `what` names the flag in messages ("--shape").
absl::StatusOr<std::vector<uint64_t>> ParseExtents(absl::string_view text, absl::string_view what);
// "1", "0,-1": NumPy's axis, each an int32.
absl::StatusOr<std::vector<int32_t>> ParseAxes(absl::string_view text);

// Checks the layout as the server will, in the flags' words: each axis in range and named once,
// an arg op given one axis or every axis, a shape or segments whose element count fits in 64 bits
// and, when `count` (the input's elements) is known, equals it. `input` names the input.
absl::Status CheckArrayLayout(const ArrayLayout& layout, const std::vector<v1::Op>& ops,
                              std::optional<uint64_t> count, absl::string_view input);

// Elements the layout covers: the shape's product or the segments' sum (for a checked layout).
uint64_t LayoutElements(const ArrayLayout& layout);
// Which axes of the shape are reduced (every one for empty axes); for a checked layout.
std::vector<bool> ReducedAxes(const ArrayLayout& layout);
// NumPy's result shape: the kept axes (and the reduced ones as 1 with keepdims), or
// (len(segments),).
std::vector<uint64_t> ResultShape(const ArrayLayout& layout);
// Results per op: the product of ResultShape.
uint64_t OutputCount(const ArrayLayout& layout);

// "shape (31, 1000003) along axis 1", "shape (7, 13, 11) along axes (0, 2), keepdims",
// "shape (4, 5) along every axis", "5 segments"; "" for a full reduction.
std::string DescribeLayout(const ArrayLayout& layout);
// Python tuple notation, as NumPy prints a shape: "()", "(5,)", "(3, 4)".
std::string ShapeText(const std::vector<uint64_t>& shape);

// Sets the spec's shape, axes and keepdims, or segments (nothing for a full reduction).
void SetArrayLayout(const ArrayLayout& layout, v1::ReduceSpec& spec);

}  // namespace gpureduce::client
