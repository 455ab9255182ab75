#pragma once

// The edge between the wire and the domain: a proto ReduceSpec becomes a validated RequestSpec.

#include "absl/status/statusor.h"
#include "gpureduce/v1/reduce.pb.h"
#include "runtime/backend.h"

namespace gpureduce::server {

// INVALID_ARGUMENT for an unknown op or kernel, an op the kernel lacks or a bad block size;
// FAILED_PRECONDITION for a kernel that exists on another backend than the running one.
absl::StatusOr<runtime::RequestSpec> ResolveSpec(const v1::ReduceSpec& spec,
                                                 const runtime::Backend& backend);

}  // namespace gpureduce::server
