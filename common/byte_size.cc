#include "common/byte_size.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <system_error>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace gpureduce {
namespace {

constexpr uint64_t kKiB = uint64_t{1} << 10;
constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;

struct Unit {
  absl::string_view suffix;  // Lower case; matched case-insensitively.
  uint64_t multiplier;
};

constexpr std::array<Unit, 11> kUnits = {{
    {"", 1},
    {"b", 1},
    {"k", kKiB},
    {"kib", kKiB},
    {"kb", 1'000},
    {"m", kMiB},
    {"mib", kMiB},
    {"mb", 1'000'000},
    {"g", kGiB},
    {"gib", kGiB},
    {"gb", 1'000'000'000},
}};

// Longer fractions could overflow `fraction * multiplier`, and no real size needs them.
constexpr size_t kMaxFractionDigits = 9;

absl::Status Malformed(absl::string_view text) {
  return absl::InvalidArgumentError(
      absl::StrFormat("invalid byte size \"%s\": expected a number with an optional suffix "
                      "B, K, KB, KiB, M, MB, MiB, G, GB or GiB (e.g. 4096, 64KiB, 1.5GiB)",
                      text));
}

bool StartsWithDigit(absl::string_view text) {
  return !text.empty() && absl::ascii_isdigit(static_cast<unsigned char>(text.front()));
}

// Consumes the leading decimal digits of `*text` (there must be at least one) into `*value`.
// Returns the number of digits, and sets `*overflow` when they do not fit in uint64_t.
size_t ConsumeDigits(absl::string_view* text, uint64_t* value, bool* overflow) {
  const auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), *value);
  *overflow = ec == std::errc::result_out_of_range;
  const size_t digits = static_cast<size_t>(ptr - text->data());
  text->remove_prefix(digits);
  return digits;
}

}  // namespace

absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text) {
  // Signs, spaces and a bare ".5" are rejected here rather than half-accepted below.
  absl::string_view rest = text;
  if (!StartsWithDigit(rest)) return Malformed(text);
  uint64_t whole = 0;
  bool overflow = false;
  ConsumeDigits(&rest, &whole, &overflow);

  uint64_t fraction = 0;
  size_t fraction_digits = 0;
  if (absl::ConsumePrefix(&rest, ".")) {
    if (!StartsWithDigit(rest)) return Malformed(text);
    bool fraction_overflow = false;
    fraction_digits = ConsumeDigits(&rest, &fraction, &fraction_overflow);
    if (fraction_overflow || fraction_digits > kMaxFractionDigits) return Malformed(text);
  }

  const std::string suffix = absl::AsciiStrToLower(rest);
  const Unit* unit = nullptr;
  for (const Unit& candidate : kUnits) {
    if (suffix == candidate.suffix) unit = &candidate;
  }
  if (unit == nullptr) return Malformed(text);

  uint64_t scale = 1;
  for (size_t i = 0; i < fraction_digits; ++i) scale *= 10;
  // fraction < 10^9 and multiplier <= 2^30, so the product stays below 2^60.
  const uint64_t fraction_scaled = fraction * unit->multiplier;
  if (fraction_scaled % scale != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("invalid byte size \"%s\": not a whole number of bytes", text));
  }
  const uint64_t fraction_bytes = fraction_scaled / scale;
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  if (overflow || whole > (kMax - fraction_bytes) / unit->multiplier) {
    return absl::InvalidArgumentError(
        absl::StrFormat("byte size \"%s\" is too large: the maximum is %d bytes", text, kMax));
  }
  return whole * unit->multiplier + fraction_bytes;
}

std::string FormatByteSize(uint64_t bytes) {
  static constexpr std::array<Unit, 3> kBinary = {{{"GiB", kGiB}, {"MiB", kMiB}, {"KiB", kKiB}}};
  for (const Unit& unit : kBinary) {
    if (bytes < unit.multiplier) continue;
    const uint64_t whole = bytes / unit.multiplier;
    const uint64_t rest = bytes % unit.multiplier;
    if (rest == 0) return absl::StrCat(whole, unit.suffix);
    // rest < 2^30, so rest * 100 cannot overflow; only exact hundredths are shown.
    if (rest * 100 % unit.multiplier == 0) {
      const uint64_t hundredths = rest * 100 / unit.multiplier;
      return hundredths % 10 == 0 ? absl::StrFormat("%d.%d%s", whole, hundredths / 10, unit.suffix)
                                  : absl::StrFormat("%d.%02d%s", whole, hundredths, unit.suffix);
    }
    break;  // Not a short exact decimal in the largest unit: fall back to bytes.
  }
  return absl::StrCat(bytes, "B");
}

}  // namespace gpureduce
