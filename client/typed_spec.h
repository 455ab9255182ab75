#pragma once

// What a request's spec says of its data and answers: the ops (one in `op`, several in `ops`), the
// dtype and ddof, each left unset at its default so that a classic float32 request carries the
// same bytes as every earlier client sent. The CLI and gpureduce-load build their specs with it.

#include <vector>

#include "common/reduction/dtype.h"
#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::client {

// Sets spec's op or ops (at least one op), dtype and ddof; clears an op already set.
void SetOpsAndDType(const std::vector<v1::Op>& ops, DType dtype, double ddof, v1::ReduceSpec& spec);

}  // namespace gpureduce::client
