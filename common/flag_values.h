#pragma once

// Strict parsing of one command-line value into a typed variable (used by FlagSet; also suits
// environment variables). On error the variable is untouched and the InvalidArgumentError
// message says what is accepted, without naming the flag; the caller adds that context.

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace gpureduce {

// true, false, 1 or 0 (case-insensitive).
absl::Status ParseFlagValue(absl::string_view text, bool* value);
// Decimal integers only: an optional '-' for signed types, then digits; no '+', spaces, hex or
// trailing text. Values outside the type's range are reported as out of range.
absl::Status ParseFlagValue(absl::string_view text, int64_t* value);
absl::Status ParseFlagValue(absl::string_view text, uint64_t* value);
absl::Status ParseFlagValue(absl::string_view text, uint32_t* value);
// A finite decimal or scientific number ("0.5", "1e-3"); no nan or inf.
absl::Status ParseFlagValue(absl::string_view text, double* value);
// absl::ParseDuration syntax ("500ms", "30s", "1h30m", "inf"); negative durations are rejected.
absl::Status ParseFlagValue(absl::string_view text, absl::Duration* value);

}  // namespace gpureduce
