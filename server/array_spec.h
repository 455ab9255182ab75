#pragma once

// The edge of issue 23's array requests: a spec's shape and axes, or segments, become the
// request's ReduceLayout, checked against the server's limit on results before any data is read.

#include <cstdint>

#include "absl/status/status.h"
#include "gpureduce/v1/reduce.pb.h"
#include "runtime/backend.h"

namespace gpureduce::server {

// Sets out->layout where `spec` asks for axes or segments (leaves it null for a full reduction).
// INVALID_ARGUMENT naming the field for a bad shape, axis or segment list, a declared
// expected_count that is not the layout's count, an empty output the ops cannot answer, or
// results (or open accumulators) over `max_result_bytes`. `out` holds the resolved ops and dtype.
absl::Status ResolveLayout(const v1::ReduceSpec& spec, uint64_t max_result_bytes,
                           runtime::RequestSpec* out);

}  // namespace gpureduce::server
