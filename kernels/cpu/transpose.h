#pragma once

// A block of a row-major table copied transposed, for the kernels that reduce columns as rows
// (columns_reduce.cc) and rows as columns (rows_reduce.cc). Internal to kernels/cpu.

#include <cstddef>
#include <cstdint>

namespace gpureduce::kernels::cpu {

// Element (r, c) of the `rows` x `cols` block at `in` (rows `in_stride` elements apart) goes to
// out[c * out_stride + r]; elements of `element` bytes (2, 4 or 8). An out_stride a little past a
// power of two keeps the columns' starts out of each other's cache sets.
inline void TransposeBlock(size_t element, const std::byte* in, uint64_t in_stride, uint64_t rows,
                           uint64_t cols, std::byte* out, uint64_t out_stride) {
  const auto copy = [&]<size_t kSize>() {
    struct Element {
      std::byte bytes[kSize];
    };
    const auto* from = reinterpret_cast<const Element*>(in);
    auto* to = reinterpret_cast<Element*>(out);
    for (uint64_t r = 0; r < rows; ++r) {
      const Element* row = from + r * in_stride;
      for (uint64_t c = 0; c < cols; ++c) to[c * out_stride + r] = row[c];
    }
  };
  switch (element) {
    case 2:
      return copy.template operator()<2>();
    case 4:
      return copy.template operator()<4>();
    default:
      return copy.template operator()<8>();
  }
}

}  // namespace gpureduce::kernels::cpu
