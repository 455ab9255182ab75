#pragma once

// The NPY preamble and header dict (format versions 1.0, 2.0 and 3.0), as specified in
// numpy/lib/format.py: "\x93NUMPY", major, minor, a little-endian header length (2 bytes in 1.0,
// 4 bytes later), then a Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': ...}.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/input/byte_reader.h"
#include "common/reduction/dtype.h"

namespace gpureduce::client {

inline constexpr absl::string_view kNpyMagic("\x93NUMPY", 6);

struct NpyHeader {
  int major_version = 0;
  int minor_version = 0;
  std::string descr;  // As written, e.g. "<f4".
  // What descr holds: f4 float32, f2 float16, f8 float64, i4 int32, i8 int64. nullopt for u2 and
  // i2, which hold bfloat16 only when the caller says so (NumPy has no bfloat16).
  std::optional<DType> dtype;
  size_t item_size = 4;  // bytes per element
  // Irrelevant to a reduction (every element is visited once); kept for Describe().
  bool fortran_order = false;
  std::vector<uint64_t> shape;  // Empty for a 0-d array, which holds one value.
  uint64_t count = 0;           // Product of shape.
  uint64_t data_offset = 0;     // Bytes before the array data: preamble plus header.
  bool big_endian = false;      // descr is ">f4" (">f8", ...): values need a byte swap.
};

// Consumes the preamble and header from `reader`, leaving it at the first data byte. Accepts
// descr f4, f2, f8, i4, i8, u2 and i2 in either byte order ("<", ">", "=" or none: native, as
// numpy reads it); any other dtype is InvalidArgument naming it and the supported ones.
absl::StatusOr<NpyHeader> ReadNpyHeader(ByteReader& reader);

// Parses the dict literal into `header` (descr, fortran_order, shape, count, big_endian).
// `name` prefixes error messages. Exposed for tests.
absl::Status ParseNpyHeaderDict(absl::string_view dict, absl::string_view name, NpyHeader& header);

// Python tuple notation: "()", "(5,)", "(3, 4)".
std::string FormatNpyShape(const std::vector<uint64_t>& shape);

}  // namespace gpureduce::client
