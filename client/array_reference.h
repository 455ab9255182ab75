#pragma once

// The client's answers to an array request (issue 23): each output's elements gathered from the
// payload in C order and reduced by a TypedReference of its own, so that gpureduce-load and
// `gpureduce reduce --verify` check every element of an answer's arrays, as they check a full
// reduction's value. Written without the server's layout code (common/reduction/reduce_layout).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "client/array_layout.h"
#include "client/typed_reference.h"
#include "common/reduction/dtype.h"
#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::client {

// One answer per output (C order of the result shape) for each op, in the ops' order.
using ArrayAnswers = std::vector<std::vector<TypedReference::Answer>>;

// The answers of `ops` over the payload `pieces` (consecutive, together the layout's elements:
// whole little-endian elements of `dtype` each) reduced as a checked `layout` says. An arg op's
// index counts within the output's elements in C order: along its one axis, over the whole array
// for every axis, or within the segment.
ArrayAnswers ComputeArrayAnswers(const ArrayLayout& layout, const std::vector<v1::Op>& ops,
                                 DType dtype, double ddof,
                                 const std::vector<absl::string_view>& pieces);

// "" when `result` (an array request's OpResult) is `op`'s answer of `shape` whose elements are
// `expected` (each checked as CheckOpResult checks a full reduction, with `tolerance`, and
// overflow_count against the elements that overflowed), else what differs, naming the first
// element that does ("sum[3, 0]: ...").
std::string CheckArrayResult(const v1::OpResult& result, v1::Op op,
                             const std::vector<uint64_t>& shape,
                             const std::vector<TypedReference::Answer>& expected, double tolerance);

}  // namespace gpureduce::client
