#include "client/cli/array_request.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/input/npy_source.h"
#include "common/byte_size.h"
#include "common/read_file.h"

namespace gpureduce::cli {

void RegisterArrayFlags(FlagSet& flags, ArrayFlags* f) {
  flags.AddString("shape", &f->shape,
                  "the input's shape in C order (row-major), whose product is its element "
                  "count: the answer is then an array, NumPy's reduction along --axis (every axis "
                  "without it). Needed for --axis and --keepdims over raw, text or --random input; "
                  "a .npy file gives its own (this reshapes it). Example: --random 3100093 "
                  "--shape 31,100003 --axis 1 (31 row sums)",
                  "D0,D1,...");
  flags.AddString(
      "axis", &f->axis,
      "the axes to reduce, as NumPy's axis: one or a comma list, negative ones counting "
      "from the end; the others are kept, in order. Arg ops take one axis (or leave it "
      "out: every axis, a flat index). Example: --axis -1 on a (4096, 1024) .npy file "
      "answers 4096 values, --axis 0,2 on a (7, 13, 11) one 13",
      "A[,B...]");
  flags.AddBool("keepdims", &f->keepdims,
                "keep each reduced axis in the result's shape with length 1, as NumPy's keepdims "
                "(--axis 1 --keepdims on (31, 100003): shape (31, 1))");
  flags.AddString("segments", &f->segments,
                  "reduce consecutive segments of the input instead, one result each (shape "
                  "(len,)): their lengths, summing to the element count, as a comma list or "
                  "@FILE (a text file of lengths separated by whitespace or commas). An empty "
                  "segment answers the op's identity (sum 0, prod 1) and is refused for ops "
                  "without one (min). Not with --shape. Example: --segments 1000,0,24 or "
                  "--segments @lengths.txt",
                  "L0,L1,...|@FILE");
  flags.AddString(
      "output", &f->output,
      "also write each op's result as a .npy file (an array request's array, a full "
      "reduction's 0-d array; bfloat16 results as float32 arrays of the same values, as "
      "NumPy has no bfloat16). With one op, FILE; with several, one file per op: FILE with the "
      "op's "
      "name before .npy (--op sum,max --output out.npy writes out.sum.npy and "
      "out.max.npy)",
      "FILE");
}

absl::StatusOr<ArrayRequest> ParseArrayFlags(const ArrayFlags& flags) {
  ArrayRequest request;
  if (!flags.shape.empty()) {
    absl::StatusOr<std::vector<uint64_t>> shape = client::ParseExtents(flags.shape, "--shape");
    if (!shape.ok()) return shape.status();
    request.shape = *std::move(shape);
  }
  if (!flags.axis.empty()) {
    absl::StatusOr<std::vector<int32_t>> axes = client::ParseAxes(flags.axis);
    if (!axes.ok()) return axes.status();
    request.axes = *std::move(axes);
  }
  request.keepdims = flags.keepdims;
  if (!flags.segments.empty()) {
    std::string text = flags.segments;
    std::string what = "--segments";
    if (absl::StartsWith(text, "@")) {
      const std::string path = text.substr(1);
      absl::StatusOr<std::string> read = ReadTextFile(path, "--segments");
      if (!read.ok()) return read.status();
      text = *std::move(read);
      what = absl::StrCat("--segments file ", path);
    }
    absl::StatusOr<std::vector<uint64_t>> segments = client::ParseExtents(text, what);
    if (!segments.ok()) return segments.status();
    request.segments = *std::move(segments);
    if (request.shape.has_value() || !request.axes.empty() || request.keepdims) {
      return absl::InvalidArgumentError(absl::StrCat(
          request.shape.has_value() ? "--shape"
          : !request.axes.empty()   ? "--axis"
                                    : "--keepdims",
          " and --segments exclude each other: reduce along the axes of a shape, or over "
          "consecutive segments, not both"));
    }
  }
  return request;
}

absl::StatusOr<client::ArrayLayout> ResolveArrayLayout(const ArrayRequest& request,
                                                       const client::FloatSource& source,
                                                       const std::vector<v1::Op>& ops) {
  client::ArrayLayout layout;
  if (!request.wanted()) return layout;
  layout.axes = request.axes;
  layout.keepdims = request.keepdims;
  layout.segments = request.segments;
  if (request.shape.has_value()) {
    layout.shape = *request.shape;
  } else if (request.segments.empty()) {
    const auto* npy = dynamic_cast<const client::NpySource*>(&source);
    const char* flag = !request.axes.empty() ? "--axis" : "--keepdims";
    if (npy == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, " needs a shape: ", source.Describe(),
                       " has none of its own (a .npy file has); give --shape D0,D1,... (C order)"));
    }
    const client::NpyHeader& header = npy->header();
    if (header.shape.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, ": ", source.Describe(), " holds a 0-d array, which has no axes to reduce"));
    }
    if (header.fortran_order && header.shape.size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, ": ", source.Describe(),
          " is in Fortran order, so its elements arrive in the reverse axis order; save it in C "
          "order (numpy.ascontiguousarray) or give --shape in the order they are stored"));
    }
    layout.shape = header.shape;
  }
  if (absl::Status checked =
          client::CheckArrayLayout(layout, ops, source.total_count(), source.Describe());
      !checked.ok()) {
    return checked;
  }
  return layout;
}

absl::Status CheckArrayVerify(bool verify, const client::ArrayLayout& layout,
                              std::optional<uint64_t> count, DType dtype) {
  if (!verify || !layout.array() || !count.has_value()) return absl::OkStatus();
  const uint64_t bytes = *count * DTypeSize(dtype);
  if (bytes <= kArrayVerifyBytes) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "--verify of an array request keeps the input in memory to compute each output's reference; "
      "this one is ",
      FormatByteSize(bytes), ", over the ", FormatByteSize(kArrayVerifyBytes),
      " it allows: leave --verify out, or verify a part of the input"));
}

}  // namespace gpureduce::cli
