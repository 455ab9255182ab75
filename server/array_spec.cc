#include "server/array_spec.h"

#include <memory>
#include <span>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/byte_size.h"
#include "common/reduction/op_result.h"
#include "common/status_macros.h"

namespace gpureduce::server {
namespace {

// Saturating a * b: the checks below compare against a limit far below 2^64.
uint64_t Times(uint64_t a, uint64_t b) { return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b; }

absl::Status CheckSize(const ReduceLayout& layout, std::span<const Op> ops, DType dtype,
                       uint64_t max_result_bytes) {
  uint64_t element_bytes = 0;
  for (Op op : ops) element_bytes += DTypeSize(ResultDType(op, dtype));
  const uint64_t result_bytes = Times(layout.outputs(), element_bytes);
  if (result_bytes > max_result_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the ", layout.Describe(), " has ", layout.outputs(), " outputs, whose results take ",
        FormatByteSize(result_bytes), ", over this server's --max-result-bytes (",
        FormatByteSize(max_result_bytes), "); reduce fewer rows at a time"));
  }
  const uint64_t open_bytes = Times(layout.open_outputs(), sizeof(Stats));
  if (open_bytes > max_result_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the ", layout.Describe(), " keeps ", layout.open_outputs(),
                     " outputs open while its elements arrive in C order (", sizeof(Stats),
                     " bytes of accumulators each: ", FormatByteSize(open_bytes),
                     "), over this server's --max-result-bytes (", FormatByteSize(max_result_bytes),
                     "); reduce fewer columns at a time"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ResolveLayout(const v1::ReduceSpec& spec, uint64_t max_result_bytes,
                           runtime::RequestSpec* out) {
  const bool shaped = spec.shape_size() > 0;
  const bool segmented = spec.segments_size() > 0;
  if (shaped && segmented) {
    return absl::InvalidArgumentError(
        "spec.shape and spec.segments are both set; reduce along axes of a shape, or over "
        "segments, not both");
  }
  if (!shaped && (spec.axes_size() > 0 || spec.keepdims())) {
    return absl::InvalidArgumentError(
        absl::StrCat(spec.axes_size() > 0 ? "spec.axes" : "spec.keepdims",
                     " needs spec.shape: name the array's shape (C order) whose axes it reduces"));
  }
  if (!shaped && !segmented) return absl::OkStatus();
  const std::span<const uint64_t> shape(spec.shape().data(), spec.shape_size());
  const std::span<const int32_t> axes(spec.axes().data(), spec.axes_size());
  const std::span<const uint64_t> lengths(spec.segments().data(), spec.segments_size());
  ASSIGN_OR_RETURN(ReduceLayout layout,
                   shaped ? ReduceLayout::ForAxes(shape, axes, spec.keepdims(), out->ops())
                          : ReduceLayout::ForSegments(lengths));
  if (out->expected_count != 0 && out->expected_count != layout.count()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "spec.expected_count is ", out->expected_count, " but the ", layout.Describe(), " holds ",
        layout.count(), " elements; leave expected_count 0 or make them agree"));
  }
  RETURN_IF_ERROR(CheckEmptyOutputs(layout, out->ops(), out->dtype, out->ddof));
  RETURN_IF_ERROR(CheckSize(layout, out->ops(), out->dtype, max_result_bytes));
  out->layout = std::make_shared<const ReduceLayout>(std::move(layout));
  return absl::OkStatus();
}

}  // namespace gpureduce::server
