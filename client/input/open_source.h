#pragma once

// Turns the CLI's input flags into a FloatSource.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "client/input/float_source.h"
#include "common/reduction/dtype.h"

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
  // The elements' type (--dtype): raw and random input are float32 unless it says otherwise; a
  // .npy file's header decides, and a given dtype must agree (bfloat16 reads uint16 and int16
  // files); text is float32 only.
  std::optional<DType> dtype;
};

// InvalidArgument for inconsistent options and undetectable formats (the message suggests
// --format), NotFound / PermissionDenied (with the path and strerror) for files that cannot be
// opened, and whatever the chosen source reports about a malformed header.
absl::StatusOr<std::unique_ptr<FloatSource>> OpenSource(const SourceOptions& options);

}  // namespace gpureduce::client
