#pragma once

// A parser for the small subset of Python literals that NPY headers are written in:
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpureduce::client {

struct PyLiteral {
  enum class Kind { kString, kInt, kBool, kNone, kTuple, kList };
  Kind kind = Kind::kNone;
  std::string text;              // kString
  uint64_t integer = 0;          // kInt; negative integers are rejected (shapes only)
  bool boolean = false;          // kBool
  std::vector<PyLiteral> items;  // kTuple, kList
};

// Parses "{'key': value, ...}" (string keys, trailing comma allowed, surrounding whitespace
// ignored) into its entries in order. InvalidArgument says what was expected and where.
absl::StatusOr<std::vector<std::pair<std::string, PyLiteral>>> ParsePyDict(absl::string_view text);

}  // namespace gpureduce::client
