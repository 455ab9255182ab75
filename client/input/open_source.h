#pragma once

// Turns the CLI's input flags into a FloatSource.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "client/input/float_source.h"

namespace gpureduce::client {

struct SourceOptions {
  // A file path, or "-" for standard input. Empty (with random_count > 0) selects random input.
  std::string path;
  // "auto" (or empty), "npy", "raw" or "text". Auto: a file that begins with the NPY magic is
  // npy; otherwise the extension decides (.npy; .raw/.bin/.f32 raw; .txt/.csv/.tsv text); stdin
  // is npy if it begins with the magic and text otherwise.
  std::string format = "auto";
  uint64_t random_count = 0;
  uint64_t random_seed = 0;
  // Random input even when random_count is 0 (an empty input); path must then be empty.
  bool random = false;
};

// InvalidArgument for inconsistent options and undetectable formats (the message suggests
// --format), NotFound / PermissionDenied (with the path and strerror) for files that cannot be
// opened, and whatever the chosen source reports about a malformed header.
absl::StatusOr<std::unique_ptr<FloatSource>> OpenSource(const SourceOptions& options);

}  // namespace gpureduce::client
