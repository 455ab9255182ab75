#include "client/array_layout.h"

#include <algorithm>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/flag_values.h"
#include "wire/op_mapping.h"

namespace gpureduce::client {
namespace {

constexpr uint64_t kMost = std::numeric_limits<uint64_t>::max();

// The tokens of a list: separated by commas and/or whitespace, inside optional parentheses or
// brackets ("(31, 7)", "[31, 7]", as Python prints them).
std::vector<std::string> Tokens(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  if (text.size() >= 2 && ((text.front() == '(' && text.back() == ')') ||
                           (text.front() == '[' && text.back() == ']'))) {
    text = text.substr(1, text.size() - 2);
  }
  return absl::StrSplit(text, absl::ByAnyChar(", \t\r\n"), absl::SkipEmpty());
}

bool IsArgOp(v1::Op op) {
  return op == v1::ARGMIN || op == v1::ARGMAX || op == v1::NANARGMIN || op == v1::NANARGMAX;
}

}  // namespace

absl::StatusOr<std::vector<uint64_t>> ParseExtents(absl::string_view text, absl::string_view what) {
  std::vector<uint64_t> values;
  for (const std::string& token : Tokens(text)) {
    uint64_t value = 0;
    if (!ParseFlagValue(token, &value).ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": '", token,
                       "' is not a length (a non-negative integer); give them as 31,1000003"));
    }
    values.push_back(value);
  }
  if (values.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is empty; give lengths as 31,1000003"));
  }
  return values;
}

absl::StatusOr<std::vector<int32_t>> ParseAxes(absl::string_view text) {
  std::vector<int32_t> axes;
  for (const std::string& token : Tokens(text)) {
    int64_t value = 0;
    if (!ParseFlagValue(token, &value).ok() || value < std::numeric_limits<int32_t>::min() ||
        value > std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--axis: '", token,
                       "' is not an axis (an integer, negative ones counting from the end: "
                       "--axis -1 is the last)"));
    }
    axes.push_back(static_cast<int32_t>(value));
  }
  if (axes.empty()) {
    return absl::InvalidArgumentError(
        "--axis is empty; name the axes to reduce (--axis 1, --axis 0,2), or leave it out to "
        "reduce every axis");
  }
  return axes;
}

absl::Status CheckArrayLayout(const ArrayLayout& layout, const std::vector<v1::Op>& ops,
                              std::optional<uint64_t> count, absl::string_view input) {
  if (!layout.shape.empty() && !layout.segments.empty()) {
    return absl::InvalidArgumentError(
        "--shape and --segments exclude each other: reduce along the axes of a shape, or over "
        "consecutive segments, not both");
  }
  if (layout.shape.empty() && (!layout.axes.empty() || layout.keepdims)) {
    return absl::InvalidArgumentError(absl::StrCat(
        !layout.axes.empty() ? "--axis" : "--keepdims",
        layout.segments.empty()
            ? " needs a shape: give --shape D0,D1,... (a .npy file gives its own)"
            : " is for the axes of a --shape; segments have none (each is reduced whole)"));
  }
  uint64_t elements = layout.segments.empty() ? 1 : 0;
  if (!layout.segments.empty()) {
    for (const uint64_t length : layout.segments) {
      if (length > kMost - elements) {
        return absl::InvalidArgumentError("--segments add up to more than 2^64 elements");
      }
      elements += length;
    }
  }
  const auto rank = static_cast<int64_t>(layout.shape.size());
  std::vector<int32_t> named(layout.shape.size(), 0);  // 1 + the index in --axis that named it
  for (size_t i = 0; i < layout.axes.size(); ++i) {
    const int32_t given = layout.axes[i];
    const int64_t axis = given < 0 ? given + rank : given;
    if (axis < 0 || axis >= rank) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--axis ", given, " is out of bounds for an array of dimension ", rank, " (shape ",
          ShapeText(layout.shape), ": its axes are ", -rank, "..", rank - 1, ")"));
    }
    if (named[axis] != 0) {
      return absl::InvalidArgumentError(absl::StrCat("--axis names axis ", axis, " twice (",
                                                     layout.axes[named[axis] - 1], " and ", given,
                                                     "); name each axis once"));
    }
    named[axis] = static_cast<int32_t>(i) + 1;
  }
  if (layout.axes.size() > 1 && layout.axes.size() < layout.shape.size()) {
    for (const v1::Op op : ops) {
      if (IsArgOp(op)) {
        return absl::InvalidArgumentError(
            absl::StrCat(wire::OpName(op),
                         " reduces one axis or every axis (NumPy's takes an int axis), but "
                         "--axis names ",
                         layout.axes.size(), " of the shape's ", rank));
      }
    }
  }
  for (const uint64_t extent : layout.shape) {
    if (extent != 0 && elements > kMost / extent) {
      return absl::InvalidArgumentError(
          absl::StrCat("--shape ", ShapeText(layout.shape), " holds more than 2^64 elements"));
    }
    elements *= extent;
  }
  if (layout.array() && count.has_value() && *count != elements) {
    return absl::InvalidArgumentError(absl::StrCat(
        layout.segments.empty() ? absl::StrCat("--shape ", ShapeText(layout.shape), " holds ")
                                : std::string("--segments add up to "),
        elements, " elements, but ", input, " holds ", *count));
  }
  return absl::OkStatus();
}

uint64_t LayoutElements(const ArrayLayout& layout) {
  uint64_t elements = 0;
  if (!layout.segments.empty()) {
    for (const uint64_t length : layout.segments) elements += length;
    return elements;
  }
  elements = 1;
  for (const uint64_t extent : layout.shape) elements *= extent;
  return elements;
}

std::vector<bool> ReducedAxes(const ArrayLayout& layout) {
  const auto rank = static_cast<int64_t>(layout.shape.size());
  std::vector<bool> reduced(layout.shape.size(), layout.axes.empty());
  for (const int32_t axis : layout.axes) reduced[axis < 0 ? axis + rank : axis] = true;
  return reduced;
}

std::vector<uint64_t> ResultShape(const ArrayLayout& layout) {
  if (!layout.segments.empty()) return {layout.segments.size()};
  const std::vector<bool> reduced = ReducedAxes(layout);
  std::vector<uint64_t> shape;
  for (size_t i = 0; i < layout.shape.size(); ++i) {
    if (!reduced[i]) {
      shape.push_back(layout.shape[i]);
    } else if (layout.keepdims) {
      shape.push_back(1);
    }
  }
  return shape;
}

uint64_t OutputCount(const ArrayLayout& layout) {
  uint64_t outputs = 1;
  for (const uint64_t extent : ResultShape(layout)) outputs *= extent;
  return outputs;
}

std::string DescribeLayout(const ArrayLayout& layout) {
  if (!layout.segments.empty()) {
    return absl::StrCat(layout.segments.size(),
                        layout.segments.size() == 1 ? " segment" : " segments");
  }
  if (layout.shape.empty()) return "";
  std::string out = absl::StrCat("shape ", ShapeText(layout.shape), " along ");
  if (layout.axes.empty()) {
    absl::StrAppend(&out, "every axis");
  } else if (layout.axes.size() == 1) {
    absl::StrAppend(&out, "axis ", layout.axes.front());
  } else {
    absl::StrAppend(&out, "axes (", absl::StrJoin(layout.axes, ", "), ")");
  }
  if (layout.keepdims) absl::StrAppend(&out, ", keepdims");
  return out;
}

std::string ShapeText(const std::vector<uint64_t>& shape) {
  if (shape.size() == 1) return absl::StrCat("(", shape[0], ",)");
  return absl::StrCat("(", absl::StrJoin(shape, ", "), ")");
}

void SetArrayLayout(const ArrayLayout& layout, v1::ReduceSpec& spec) {
  spec.clear_shape();
  spec.clear_axes();
  spec.clear_keepdims();
  spec.clear_segments();
  for (const uint64_t extent : layout.shape) spec.add_shape(extent);
  for (const int32_t axis : layout.axes) spec.add_axes(axis);
  if (layout.keepdims) spec.set_keepdims(true);
  for (const uint64_t length : layout.segments) spec.add_segments(length);
}

}  // namespace gpureduce::client
