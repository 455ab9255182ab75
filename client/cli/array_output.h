#pragma once

// How `gpureduce reduce` shows an array request's answer (issue 23): each op's result dtype and
// shape and its values NumPy-style (all of them up to kSummarizeAbove, else the first and last
// kEdgeItems along each long axis with "..."), and for --json the values as a JSON array nested to
// the shape.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "client/cli/json.h"
#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::cli {

// As NumPy's printoptions threshold and edgeitems, with a smaller threshold: a terminal line.
inline constexpr uint64_t kSummarizeAbove = 20;
inline constexpr uint64_t kEdgeItems = 3;

// The values of an array result nested to its shape, NumPy-style: "[1.5, -2, 3]", a 2-d array's
// rows on lines of their own ("[[1, 2],\n <indent> [3, 4]]": every line after the first starts
// with `indent`), "..." in place of the middle of each axis longer than 2 * kEdgeItems when the
// array holds more than kSummarizeAbove elements. Each value is FormatTypedValue's text of the
// result dtype (arg ops: int64 indices); a 0-d array is its one value.
std::string FormatArrayValues(const v1::OpResult& result, absl::string_view indent = "");

// "result: sum (float64, shape (31,)) = [...]" per op; a 2-d or larger array starts on the next
// line, indented.
std::string FormatArrayResultsText(const v1::ReduceResponse& response);

// Every value of an array result as JSON, nested to its shape (a 0-d array: the value itself):
// integers (and arg ops' indices) as numbers, floats as JsonNumber writes them.
Json ArrayValuesJson(const v1::OpResult& result);

}  // namespace gpureduce::cli
