#pragma once

// Human-readable byte sizes ("64MiB", "1.5GiB", "1MB") for flags, logs and reports.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpureduce {

// Parses a non-negative byte count: a decimal number with an optional case-insensitive suffix B,
// K/KiB (2^10), M/MiB (2^20), G/GiB (2^30), KB (10^3), MB (10^6) or GB (10^9). A fraction is
// accepted when it names a whole number of bytes ("1.5KiB" is 1536; "1.1KiB" is an error).
// Returns InvalidArgumentError for malformed text and for values that do not fit in uint64_t.
absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text);

// Formats `bytes` exactly, in the largest binary unit that needs at most two decimals
// ("64MiB", "1.5GiB", "1.25KiB"), else in bytes ("4097B"). ParseByteSize reads it back.
std::string FormatByteSize(uint64_t bytes);

}  // namespace gpureduce
