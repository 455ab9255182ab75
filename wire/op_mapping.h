#pragma once

// Where the wire's ops (gpureduce.v1.Op) and the domain's (gpureduce::Op) meet, for the server's
// edge and the client alike. The two enums share their values (checked at compile time in
// op_mapping.cc), so a log line and the wire name an op by the same number.

#include <optional>
#include <string>
#include <vector>

#include "common/reduction/op.h"
#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::wire {

v1::Op ToProto(Op op);

// The domain op a wire value names; nullopt for OP_UNSPECIFIED and for a number this build does
// not know (proto3 enums are open: a newer client may send one).
std::optional<Op> FromProto(int wire_value);

// The tools' names of the ops (common/reduction/op_name.h's: "sum", ..., "argmax"), in order.
std::vector<std::string> OpNames();

// The tools' name of a wire op; "unknown" for a number that names no op.
std::string OpName(int wire_value);

// The wire op the tools' name stands for, exactly as OpNames spells it; nullopt for other text.
std::optional<v1::Op> ParseOpName(const std::string& name);

}  // namespace gpureduce::wire
