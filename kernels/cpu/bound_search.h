#pragma once

// Where a task's elements start among a request's segment bounds (segmented_reduce.cc): a search
// that starts where a split into segments of one length would put the answer, and gallops from
// there. A binary search over millions of bounds missed the cache a dozen times a task, three
// searches a task of 64Ki elements (segments of 16: 4,096 a task).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

namespace gpureduce::kernels::cpu {

// The first index i of the sorted `bounds` with !before(bounds[i]) (bounds.size() if none), as
// std::partition_point; `guess` is where to look first.
template <typename BeforeF>
size_t GallopFrom(std::span<const uint64_t> bounds, size_t guess, BeforeF before) {
  const size_t n = bounds.size();
  guess = std::min(guess, n);
  size_t lo = 0, hi = n;  // the answer lies in [lo, hi]
  if (guess < n && before(bounds[guess])) {
    lo = guess + 1;
    for (size_t step = 1; lo + step - 1 < n; step *= 2) {
      const size_t probe = lo + step - 1;
      if (!before(bounds[probe])) {
        hi = probe;
        break;
      }
      lo = probe + 1;
    }
  } else {
    hi = guess;
    for (size_t step = 1; hi > 0; step *= 2) {
      const size_t probe = hi > step ? hi - step : 0;
      if (before(bounds[probe])) {
        lo = probe + 1;
        break;
      }
      hi = probe;
    }
  }
  return static_cast<size_t>(
      std::partition_point(bounds.begin() + lo, bounds.begin() + hi, before) - bounds.begin());
}

// Where a split of `elements` into `segments` of one length puts element `at`'s segment.
inline size_t UniformGuess(uint64_t at, uint64_t elements, size_t segments) {
  if (elements == 0) return 0;
  if (at >= elements) return segments;
  __extension__ typedef unsigned __int128 Wide;  // at * segments may pass 64 bits
  return static_cast<size_t>(static_cast<Wide>(at) * segments / elements);
}

}  // namespace gpureduce::kernels::cpu
