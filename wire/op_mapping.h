#pragma once

// Where the wire's ops (gpureduce.v1.Op) and the domain's (gpureduce::Op) meet, for the server's
// edge and the client alike. The two enums share their values (checked at compile time in
// op_mapping.cc), so a log line and the wire name an op by the same number.

#include <optional>

#include "common/reduction/op.h"
#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::wire {

v1::Op ToProto(Op op);

// The domain op a wire value names; nullopt for OP_UNSPECIFIED and for a number this build does
// not know (proto3 enums are open: a newer client may send one).
std::optional<Op> FromProto(int wire_value);

}  // namespace gpureduce::wire
