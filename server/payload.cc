#include "server/payload.h"

#include <bit>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace gpureduce::server {

static_assert(std::endian::native == std::endian::little,
              "the wire format is little-endian float32; a big-endian host must byte-swap");

absl::StatusOr<std::span<const float>> ExtractPayload(
    absl::string_view data, const google::protobuf::RepeatedField<float>& values,
    uint64_t max_bytes, const char* too_big, std::vector<float>* scratch) {
  if (!data.empty() && !values.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "both payload fields are set (data: ", data.size(), " bytes, values: ", values.size(),
        " floats); send the array in exactly one of them"));
  }
  const uint64_t bytes = data.empty() ? uint64_t(values.size()) * sizeof(float) : data.size();
  if (bytes > max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "payload of ", bytes, " bytes exceeds the limit of ", max_bytes, " bytes; ", too_big));
  }
  if (data.empty()) return std::span<const float>(values.data(), values.size());
  if (data.size() % sizeof(float) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("data holds ", data.size(),
                     " bytes, which is not a multiple of 4: data must be little-endian float32"));
  }
  const size_t count = data.size() / sizeof(float);
  if (reinterpret_cast<uintptr_t>(data.data()) % alignof(float) == 0) {
    return std::span<const float>(reinterpret_cast<const float*>(data.data()), count);
  }
  scratch->resize(count);
  std::memcpy(scratch->data(), data.data(), data.size());
  return std::span<const float>(*scratch);
}

}  // namespace gpureduce::server
