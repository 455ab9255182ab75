#pragma once

// A typed answer (common/reduction/op_result.h) as the wire's OpResult.

#include "common/reduction/op_result.h"
#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::wire {

void ToProto(const OpResult& result, v1::OpResult* out);

}  // namespace gpureduce::wire
