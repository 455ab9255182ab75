#include "client/input/float_source.h"

#include <algorithm>
#include <vector>

namespace gpureduce::client {

absl::StatusOr<uint64_t> FloatSource::Skip(uint64_t values) {
  std::vector<float> scratch(static_cast<size_t>(std::min<uint64_t>(values, uint64_t{1} << 16)));
  uint64_t done = 0;
  while (done < values) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(scratch.size(), values - done));
    absl::StatusOr<size_t> got = Read(absl::MakeSpan(scratch.data(), want));
    if (!got.ok()) return got.status();
    if (*got == 0) break;
    done += *got;
  }
  return done;
}

}  // namespace gpureduce::client
