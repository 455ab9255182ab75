// TextSource from raw bytes, read three ways (a regular file and a pipe, buffers from the
// smallest to 4 KiB, one to 64 values per Read) so tokens, comments and a UTF-8 BOM fall across
// buffer boundaries. Each way must deliver what an independent reading of the whole input
// gives: the header's syntax (text_source.h) applied with strtof, value for value and bit for
// bit, up to the first bad token, which must be INVALID_ARGUMENT naming its line.

#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/types/span.h"
#include "client/input/text_source.h"
#include "tests/fuzz/fuzz_support.h"

namespace gpureduce::fuzzing {
namespace {

using absl::StatusCode;

// What reading the input must give: its values, then the end or an error on `error_line`.
struct Expectation {
  std::vector<float> values;
  std::optional<uint64_t> error_line;
};

bool IsSeparator(char c) {
  return absl::string_view(" \t\n\r\v\f,;").find(c) != absl::string_view::npos;
}

// Whether `token` is a float32 by the header's rules, written with strtof: decimal, scientific,
// inf, infinity and nan in any case, an optional sign; no hex (strtof's, not from_chars'); a
// finite value beyond float32's range is refused, one too small rounds as strtof rounds it.
std::optional<float> ParseReference(absl::string_view token) {
  if (token.size() > client::TextSource::kMaxTokenLength) return std::nullopt;
  absl::string_view digits = token;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) digits.remove_prefix(1);
  if (absl::StartsWithIgnoreCase(digits, "0x")) return std::nullopt;
  const std::string text(token);
  char* end = nullptr;
  errno = 0;
  const float value = std::strtof(text.c_str(), &end);
  if (end != text.c_str() + text.size() || text.empty()) return std::nullopt;
  if (errno == ERANGE && std::isinf(value)) return std::nullopt;
  return value;
}

Expectation Expect(absl::string_view text) {
  Expectation out;
  absl::ConsumePrefix(&text, "\xEF\xBB\xBF");
  uint64_t line = 1;
  size_t i = 0;
  while (i < text.size()) {
    if (IsSeparator(text[i])) {
      if (text[i++] == '\n') ++line;
      continue;
    }
    if (text[i] == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && !IsSeparator(text[end])) ++end;
    const std::optional<float> value = ParseReference(text.substr(i, end - i));
    if (!value.has_value()) {
      out.error_line = line;
      return out;
    }
    out.values.push_back(*value);
    i = end;
  }
  return out;
}

bool SameValue(float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b) && std::signbit(a) == std::signbit(b);
  return SameBits(a, b);
}

void ReadAndCheck(absl::string_view text, const Expectation& expected, ReaderKind kind,
                  size_t buffer_size, size_t chunk) {
  std::unique_ptr<client::ByteReader> reader = MemoryReader(text, kind, buffer_size);
  if (reader == nullptr) Fail("the input does not fit in a pipe: lower -max_len");
  const std::string name = reader->name();
  client::TextSource source(std::move(reader));
  const std::string how =
      absl::StrCat(name, " with a ", buffer_size, "-byte buffer, ", chunk, " values per Read: ");
  std::vector<float> buffer(chunk);
  size_t delivered = 0;
  while (true) {
    absl::StatusOr<size_t> got = source.Read(absl::MakeSpan(buffer));
    CheckCode(got.status(), {StatusCode::kInvalidArgument}, "TextSource::Read");
    for (size_t i = 0; got.ok() && i < *got; ++i, ++delivered) {
      GPUREDUCE_FUZZ_CHECK(delivered < expected.values.size(),
                           absl::StrCat(how, "value ", delivered, " is one too many"));
      GPUREDUCE_FUZZ_CHECK(SameValue(buffer[i], expected.values[delivered]),
                           absl::StrCat(how, "value ", delivered, " is ", buffer[i],
                                        ", strtof reads ", expected.values[delivered]));
    }
    if (!got.ok()) {
      // Values before the bad token may have been delivered in the same Read: not counted.
      GPUREDUCE_FUZZ_CHECK(expected.error_line.has_value() && delivered <= expected.values.size(),
                           absl::StrCat(how, got.status().ToString()));
      const std::string prefix = absl::StrCat(name, ":", *expected.error_line, ": ");
      GPUREDUCE_FUZZ_CHECK(absl::StartsWith(got.status().message(), prefix),
                           absl::StrCat(how, got.status().ToString(), " (expected ", prefix, ")"));
      return;
    }
    if (*got < chunk) break;  // a short count means the end
  }
  GPUREDUCE_FUZZ_CHECK(
      !expected.error_line.has_value() && delivered == expected.values.size(),
      absl::StrCat(how, delivered, " values then the end; expected ", expected.values.size(),
                   expected.error_line ? " then an error" : ""));
  absl::StatusOr<size_t> again = source.Read(absl::MakeSpan(buffer));
  GPUREDUCE_FUZZ_CHECK(again.ok() && *again == 0,
                       absl::StrCat(how, "the end did not stay the end"));
}

}  // namespace
}  // namespace gpureduce::fuzzing

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using gpureduce::fuzzing::ReaderKind;
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  const gpureduce::fuzzing::Expectation expected = gpureduce::fuzzing::Expect(text);
  gpureduce::fuzzing::ReadAndCheck(text, expected, ReaderKind::kFile, 1, 1);
  gpureduce::fuzzing::ReadAndCheck(text, expected, ReaderKind::kPipe, 16 + size % 37, 3);
  gpureduce::fuzzing::ReadAndCheck(text, expected, ReaderKind::kFile, 4096, 64);
  return 0;
}
