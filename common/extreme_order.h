#pragma once

// The rule MIN, MAX, ARGMIN and ARGMAX reduce by, written once for the host and the device:
// NumPy's. A NaN goes before every number (so any NaN makes MIN/MAX NaN, and ARGMIN/ARGMAX
// return the first NaN's index); among numbers the smaller (MIN, ARGMIN) or larger (MAX, ARGMAX)
// goes first; between equals, and between NaNs, the lower index. Every backend and kernel, the
// Combine of partials, and the client combining the parts of a reduction sent on several streams
// decide with these functions, so they cannot disagree. In common/, since all of them use it.

#include <cstdint>
#include <type_traits>

#include "common/host_device.h"

namespace gpureduce {

// MIN (`less`) or MAX of two values: NaN when either is NaN, else the extreme; a tie keeps `a`.
// One select on a condition without branches, so the CPU's loops vectorize. On the GPU a float
// pair takes PTX's min.NaN / max.NaN: the same rule in one instruction, except in two details
// no op's contract depends on: its NaN is the canonical positive one, and it orders -0 below +0.
template <typename T>
GPUREDUCE_HOST_DEVICE inline T PickExtreme(bool less, T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) {
    float out;
    if (less) {
      asm("min.NaN.f32 %0, %1, %2;" : "=f"(out) : "f"(a), "f"(b));
    } else {
      asm("max.NaN.f32 %0, %1, %2;" : "=f"(out) : "f"(a), "f"(b));
    }
    return out;
  }
#endif
  return (b != b || (less ? b < a : b > a)) ? b : a;
}

// ARGMIN (`less`) or ARGMAX: whether element (`value`, `index`) goes before (`other`,
// `other_index`) in the order above. A total order on distinct indices, so a reduction by it
// may combine in any order and still returns the first occurrence.
template <typename T>
GPUREDUCE_HOST_DEVICE inline bool PrecedesExtreme(bool less, T value, int64_t index, T other,
                                                  int64_t other_index) {
  const bool nan = value != value, other_nan = other != other;
  if (nan || other_nan) return nan && (!other_nan || index < other_index);
  if (value == other) return index < other_index;
  return less ? value < other : value > other;
}

// PrecedesExtreme for a `later` element against an `earlier` one (a higher index against a lower
// one), as a thread that reads elements in increasing index asks it: no index to compare, which
// keeps the test that most elements fail down to two compares in the kernels' inner loops.
// Bitwise & and | on purpose: every operand is one compare, and without short-circuit branches
// the GPU evaluates the whole test in predicates (measured: the && / || form branched and made
// ARGMIN/ARGMAX 8% slower at 2^24 on the H100).
template <typename T>
GPUREDUCE_HOST_DEVICE inline bool LaterPrecedes(bool less, T later, T earlier) {
  const bool improves = less ? later < earlier : later > earlier;
  return (earlier == earlier) & ((later != later) | improves);
}

}  // namespace gpureduce
