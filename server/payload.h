#pragma once

// The floats a ReduceRequest or ReduceChunk carries, validated, where they were received.

#include <cstdint>

#include "absl/status/statusor.h"
#include "google/protobuf/repeated_field.h"
#include "runtime/float_pieces.h"

namespace gpureduce::server {

// `data` (little-endian float32 bytes, where they were received) or `values`; setting both, or
// a byte length that is not a multiple of 4, is INVALID_ARGUMENT; more than `max_bytes` is
// RESOURCE_EXHAUSTED with `too_big` appended to the message. The result lists `data`'s pieces,
// or `values` in place; either must outlive it.
absl::StatusOr<runtime::FloatPieces> ExtractPayload(
    const runtime::FloatPieces& data, const google::protobuf::RepeatedField<float>& values,
    uint64_t max_bytes, const char* too_big);

}  // namespace gpureduce::server
