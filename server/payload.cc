#include "server/payload.h"

#include <bit>
#include <span>

#include "absl/strings/str_cat.h"
#include "common/reduction/op_name.h"

namespace gpureduce::server {

static_assert(std::endian::native == std::endian::little,
              "the wire format is little-endian; a big-endian host must byte-swap");

absl::StatusOr<runtime::PayloadPieces> ExtractPayload(
    const runtime::PayloadPieces& data, const google::protobuf::RepeatedField<float>& values,
    uint64_t max_bytes, const char* too_big, DType dtype, bool whole_elements) {
  if (!data.empty() && !values.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "both payload fields are set (data: ", data.bytes(), " bytes, values: ", values.size(),
        " floats); send the array in exactly one of them"));
  }
  if (!values.empty() && dtype != DType::kFloat32) {
    return absl::InvalidArgumentError(
        absl::StrCat("values carries float32, but spec.dtype is ", DTypeName(dtype),
                     "; send the array's little-endian bytes in data"));
  }
  const uint64_t bytes = data.empty() ? uint64_t(values.size()) * sizeof(float) : data.bytes();
  if (bytes > max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "payload of ", bytes, " bytes exceeds the limit of ", max_bytes, " bytes; ", too_big));
  }
  if (data.empty()) {
    return runtime::PayloadPieces(std::span<const float>(values.data(), values.size()));
  }
  runtime::PayloadPieces out = data;
  out.set_element_bytes(DTypeSize(dtype));
  if (whole_elements && data.bytes() % DTypeSize(dtype) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "data holds ", data.bytes(), " bytes, which is not a multiple of ", DTypeSize(dtype),
        ": data must be little-endian ", DTypeName(dtype), " (spec.dtype)"));
  }
  return out;
}

}  // namespace gpureduce::server
