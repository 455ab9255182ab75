#include "client/input/float_source.h"

#include <algorithm>
#include <cstring>
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

absl::StatusOr<size_t> FloatSource::ReadBytes(absl::Span<char> out) {
  const size_t n = out.size() / sizeof(float);
  if (reinterpret_cast<uintptr_t>(out.data()) % alignof(float) == 0) {
    return Read(absl::MakeSpan(reinterpret_cast<float*>(out.data()), n));
  }
  std::vector<float> floats(n);
  absl::StatusOr<size_t> got = Read(absl::MakeSpan(floats));
  if (got.ok() && *got > 0) std::memcpy(out.data(), floats.data(), *got * sizeof(float));
  return got;
}

}  // namespace gpureduce::client
