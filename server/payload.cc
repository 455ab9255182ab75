#include "server/payload.h"

#include <bit>
#include <span>

#include "absl/strings/str_cat.h"

namespace gpureduce::server {

static_assert(std::endian::native == std::endian::little,
              "the wire format is little-endian float32; a big-endian host must byte-swap");

absl::StatusOr<runtime::FloatPieces> ExtractPayload(
    const runtime::FloatPieces& data, const google::protobuf::RepeatedField<float>& values,
    uint64_t max_bytes, const char* too_big) {
  if (!data.empty() && !values.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "both payload fields are set (data: ", data.bytes(), " bytes, values: ", values.size(),
        " floats); send the array in exactly one of them"));
  }
  const uint64_t bytes = data.empty() ? uint64_t(values.size()) * sizeof(float) : data.bytes();
  if (bytes > max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "payload of ", bytes, " bytes exceeds the limit of ", max_bytes, " bytes; ", too_big));
  }
  if (data.empty()) {
    return runtime::FloatPieces(std::span<const float>(values.data(), values.size()));
  }
  if (data.bytes() % sizeof(float) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("data holds ", data.bytes(),
                     " bytes, which is not a multiple of 4: data must be little-endian float32"));
  }
  return data;
}

}  // namespace gpureduce::server
