#pragma once

// The elements a ReduceRequest or ReduceChunk carries, validated, where they were received.

#include <cstdint>

#include "absl/status/statusor.h"
#include "common/reduction/dtype.h"
#include "google/protobuf/repeated_field.h"
#include "runtime/payload_pieces.h"

namespace gpureduce::server {

// `data` (little-endian elements of `dtype`, where they were received) or `values` (float32
// only); setting both, or (with `whole_elements`) a byte length that is not a multiple of the
// element size, is INVALID_ARGUMENT; more than `max_bytes` is RESOURCE_EXHAUSTED with `too_big`
// appended to the message. The result lists `data`'s pieces, or `values` in place, counting
// elements of `dtype`; either must outlive it.
absl::StatusOr<runtime::PayloadPieces> ExtractPayload(
    const runtime::PayloadPieces& data, const google::protobuf::RepeatedField<float>& values,
    uint64_t max_bytes, const char* too_big, DType dtype = DType::kFloat32,
    bool whole_elements = true);

}  // namespace gpureduce::server
