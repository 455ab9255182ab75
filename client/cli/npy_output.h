#pragma once

// `gpureduce reduce --output FILE`: each op's result written as a .npy file NumPy loads
// (numpy.load), an array request's array with its shape, a full reduction's as a 0-d array.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::cli {

// A .npy file of a C-order array: format 1.0 (2.0 when the header passes 64 KiB), the header
// padded with spaces to a multiple of 64 bytes as numpy.save writes it, then `data`, the
// elements' little-endian bytes of `dtype` (not bfloat16, which NumPy lacks).
std::string NpyFileBytes(v1::DType dtype, const std::vector<uint64_t>& shape,
                         absl::string_view data);

// One op's result as a .npy file: its array (shape and data), or for a full reduction's result
// (no shape, no data) a 0-d array of its value in the result dtype (an arg op's index, int64).
// A bfloat16 result is written as float32 holding the same values exactly, as the Python client
// returns it.
std::string ResultNpyBytes(const v1::OpResult& result);

// Where --output FILE puts each op's result: FILE itself for one op; for several, FILE with
// ".<op>" inserted before its ".npy" (out.npy: out.sum.npy, out.max.npy), or appended with
// ".npy" when FILE has no such ending.
std::vector<std::string> OutputPaths(const std::string& file, const std::vector<v1::Op>& ops);

// Writes each result of `response` to its OutputPaths file; returns the paths, or an error naming
// the file that could not be written.
absl::StatusOr<std::vector<std::string>> WriteResultFiles(const std::string& file,
                                                          const v1::ReduceResponse& response);

}  // namespace gpureduce::cli
