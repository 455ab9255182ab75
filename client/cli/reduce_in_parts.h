#pragma once

// `gpureduce reduce --streams N`: the input's contiguous parts sent at once, each on a connection
// of its own, and --verify's reference read in a second pass.

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/cli/reduce_flags.h"
#include "client/input/open_source.h"
#include "client/reducer_client.h"
#include "client/running_reference.h"
#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::cli {

// --streams N: the input's contiguous parts, each read by a source of its own, sent at once.
absl::StatusOr<v1::ReduceResponse> SendInParts(const ReduceFlags& f,
                                               const client::SourceOptions& source_options,
                                               uint64_t total, const v1::ReduceSpec& spec,
                                               const client::StreamOptions& options,
                                               absl::Status* input_error);

// The client's reference for --streams --verify: a second pass over the input, in order.
absl::Status ReferencePass(const client::SourceOptions& source_options, size_t chunk_elements,
                           client::RunningReference& reference);

}  // namespace gpureduce::cli
