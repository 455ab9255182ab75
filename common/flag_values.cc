#include "common/flag_values.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <system_error>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"

namespace gpureduce {
namespace {

template <typename T>
absl::Status ParseInteger(absl::string_view text, T* out) {
  static_assert(std::is_integral_v<T>);
  const std::string range = absl::StrFormat("an integer in [%d, %d]", std::numeric_limits<T>::min(),
                                            std::numeric_limits<T>::max());
  // Check the shape first so that only well-formed numbers are called out of range.
  absl::string_view digits = text;
  const bool negative = absl::ConsumePrefix(&digits, "-");
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), absl::ascii_isdigit)) {
    return absl::InvalidArgumentError(absl::StrCat("expected ", range));
  }
  T value{};
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  // Unsigned from_chars calls "-1" malformed; here it is well-formed but out of range.
  if (ec != std::errc() || ptr != text.data() + text.size() ||
      (negative && std::is_unsigned_v<T>)) {
    return absl::InvalidArgumentError(absl::StrCat("out of range; expected ", range));
  }
  *out = value;
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseFlagValue(absl::string_view text, bool* value) {
  if (text == "1" || absl::EqualsIgnoreCase(text, "true")) {
    *value = true;
  } else if (text == "0" || absl::EqualsIgnoreCase(text, "false")) {
    *value = false;
  } else {
    return absl::InvalidArgumentError("expected true, false, 1 or 0");
  }
  return absl::OkStatus();
}

absl::Status ParseFlagValue(absl::string_view text, int64_t* value) {
  return ParseInteger(text, value);
}

absl::Status ParseFlagValue(absl::string_view text, uint64_t* value) {
  return ParseInteger(text, value);
}

absl::Status ParseFlagValue(absl::string_view text, uint32_t* value) {
  return ParseInteger(text, value);
}

absl::Status ParseFlagValue(absl::string_view text, double* value) {
  double parsed = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() ||
      !std::isfinite(parsed)) {
    return absl::InvalidArgumentError("expected a finite number such as 0.5 or 1e-3");
  }
  *value = parsed;
  return absl::OkStatus();
}

absl::Status ParseFlagValue(absl::string_view text, absl::Duration* value) {
  absl::Duration parsed;
  if (!absl::ParseDuration(text, &parsed)) {
    return absl::InvalidArgumentError("expected a duration such as 500ms, 30s, 1m or 1h30m");
  }
  if (parsed < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("duration must not be negative");
  }
  *value = parsed;
  return absl::OkStatus();
}

}  // namespace gpureduce
