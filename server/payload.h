#pragma once

// The floats a ReduceRequest or ReduceChunk carries, validated, without copying when possible.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/repeated_field.h"

namespace gpureduce::server {

// `data` (little-endian float32 bytes) or `values`; setting both, or a byte length that is not a
// multiple of 4, is INVALID_ARGUMENT; more than `max_bytes` is RESOURCE_EXHAUSTED with `too_big`
// appended to the message. The span points into the message, or into `scratch` when the bytes
// are not 4-byte aligned.
absl::StatusOr<std::span<const float>> ExtractPayload(
    absl::string_view data, const google::protobuf::RepeatedField<float>& values,
    uint64_t max_bytes, const char* too_big, std::vector<float>* scratch);

template <typename MessageT>
absl::StatusOr<std::span<const float>> ExtractPayload(const MessageT& message, uint64_t max_bytes,
                                                      const char* too_big,
                                                      std::vector<float>* scratch) {
  return ExtractPayload(message.data(), message.values(), max_bytes, too_big, scratch);
}

}  // namespace gpureduce::server
