#pragma once

// Where the wire's dtypes (gpureduce.v1.DType) and the domain's (gpureduce::DType) meet. They
// share their values (checked at compile time in dtype_mapping.cc); the wire's 0, unset, is
// float32, what every request meant before dtypes existed.

#include "absl/status/statusor.h"
#include "common/reduction/dtype.h"
#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::wire {

v1::DType ToProto(DType dtype);

// The domain dtype a wire value names (DTYPE_UNSPECIFIED is float32); INVALID_ARGUMENT naming
// the field `field` and the choices for a number this build does not know (a newer client's).
absl::StatusOr<DType> DTypeFromProto(int wire_value, const char* field = "spec.dtype");

}  // namespace gpureduce::wire
