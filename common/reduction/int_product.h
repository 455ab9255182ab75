#pragma once

// Whether an integer product left int64's range, written once for the host and the device: the
// CPU's merges of Stats, the GPU's threads, warps and blocks. The contract's `overflow` is the
// exact product's (docs/array-api.md), not its partial products': int64's least times -1 is
// +2^63, out of range, yet a later -1 brings it back to -2^63. So a product is in one of three
// states beside its wrapped bits: in range, exactly +2^63 (its bits -2^63's), or out for good
// (past 2^63 in magnitude: factors but 0 have magnitude >= 1, so the magnitude only grows, and a
// 0 is flagged apart).

#include <cstdint>

#include "common/host_device.h"

namespace gpureduce {

struct IntProductRange {
  bool leaves = false;     // the exact product's magnitude passed 2^63 (or it is +2^63 twice over)
  bool two_to_63 = false;  // the exact product is +2^63: out of range by its sign alone
};

// The range of the exact product a * b, where each is in range as its wrapped bits say, or
// +2^63 (`a_two_to_63`, `b_two_to_63`; the bits are then 2^63's). a * b's wrapped bits are the
// product's either way.
GPUREDUCE_HOST_DEVICE inline IntProductRange RangeOfProduct(uint64_t a, bool a_two_to_63,
                                                            uint64_t b, bool b_two_to_63) {
  IntProductRange range;
  if (a_two_to_63 || b_two_to_63) {
    if (a_two_to_63 && b_two_to_63) {
      range.leaves = true;
      return range;
    }
    const int64_t other = static_cast<int64_t>(a_two_to_63 ? b : a);
    range.two_to_63 = other == 1;                            // +2^63 still
    range.leaves = other != 1 && other != -1 && other != 0;  // -1 makes -2^63, 0 makes 0
    return range;
  }
  const int64_t x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
  const uint64_t low = a * b;
#if defined(__CUDA_ARCH__)
  const int64_t high = __mul64hi(x, y);
#else
  const int64_t high = __extension__ static_cast<int64_t>((static_cast<__int128>(x) * y) >> 64);
#endif
  if (high == (static_cast<int64_t>(low) >> 63)) return range;  // in range
  range.two_to_63 = high == 0 && low == (uint64_t{1} << 63);
  range.leaves = !range.two_to_63;
  return range;
}

}  // namespace gpureduce
