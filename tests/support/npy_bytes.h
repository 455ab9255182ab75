#pragma once

// Hand-built NPY files for the input tests and the fuzz seeds, byte for byte as numpy writes
// them. Header-only and free of GoogleTest, so the seed generator can use it too.

#include <cstddef>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace gpureduce::testing {

// An NPY preamble and header: magic, version, little-endian header length, then the dict padded
// with spaces and a '\n' to a multiple of 64 bytes.
inline std::string NpyHeaderBytes(int major, absl::string_view dict, int minor = 0) {
  const size_t length_bytes = major == 1 ? 2 : 4;
  std::string text(dict);
  const size_t unpadded = 8 + length_bytes + text.size() + 1;
  text.append((64 - unpadded % 64) % 64, ' ');
  text.push_back('\n');
  std::string out("\x93NUMPY", 6);
  out.push_back(static_cast<char>(major));
  out.push_back(static_cast<char>(minor));
  for (size_t i = 0; i < length_bytes; ++i) {
    out.push_back(static_cast<char>((text.size() >> (8 * i)) & 0xff));
  }
  return out + text;
}

inline std::string NpyDict(absl::string_view descr, absl::string_view shape,
                           bool fortran_order = false) {
  return absl::StrCat("{'descr': '", descr,
                      "', 'fortran_order': ", fortran_order ? "True" : "False",
                      ", 'shape': ", shape, ", }");
}

}  // namespace gpureduce::testing
