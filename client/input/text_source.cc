#include "client/input/text_source.h"

#include <array>
#include <charconv>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace gpureduce::client {
namespace {

constexpr absl::string_view kUtf8Bom("\xEF\xBB\xBF", 3);

constexpr std::array<bool, 256> kSeparators = [] {
  std::array<bool, 256> table{};
  for (unsigned char c : absl::string_view(" \t\n\r\v\f,;")) table[c] = true;
  return table;
}();

bool IsSeparator(char c) { return kSeparators[static_cast<unsigned char>(c)]; }

size_t FindSeparator(absl::string_view text) {
  size_t i = 0;
  while (i < text.size() && !IsSeparator(text[i])) ++i;
  return i;
}

// The power of ten of the leading significant digit of a well-formed decimal token ("0.002e5"
// gives 2). from_chars reports overflow and underflow alike as out of range; this tells them apart.
int64_t LeadingDecimalExponent(absl::string_view token) {
  size_t i = 0;
  if (i < token.size() && (token[i] == '-' || token[i] == '+')) ++i;
  int64_t integer_digits = 0;
  int64_t digits = 0;
  int64_t first_nonzero = -1;
  bool in_fraction = false;
  for (; i < token.size(); ++i) {
    const char c = token[i];
    if (c == '.') {
      in_fraction = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    if (!in_fraction) ++integer_digits;
    if (c != '0' && first_nonzero < 0) first_nonzero = digits;
    ++digits;
  }
  int64_t exponent = 0;
  if (i < token.size() && (token[i] == 'e' || token[i] == 'E')) {
    ++i;
    const bool negative = i < token.size() && token[i] == '-';
    if (i < token.size() && (token[i] == '-' || token[i] == '+')) ++i;
    for (; i < token.size() && token[i] >= '0' && token[i] <= '9'; ++i) {
      if (exponent < 1'000'000'000) exponent = exponent * 10 + (token[i] - '0');
    }
    if (negative) exponent = -exponent;
  }
  if (first_nonzero < 0) return -1;  // All zeros: from_chars never calls that out of range.
  return integer_digits - 1 - first_nonzero + exponent;
}

// The token as it should appear in a message: quoted, escaped, and cut to a readable length.
std::string Quote(absl::string_view token) {
  constexpr size_t kShown = 64;
  return absl::StrCat("'", absl::CHexEscape(token.substr(0, kShown)),
                      token.size() > kShown ? "..." : "", "'");
}

}  // namespace

TextSource::TextSource(std::unique_ptr<ByteReader> reader) : reader_(std::move(reader)) {}

std::string TextSource::Describe() const { return absl::StrCat(reader_->name(), " (text)"); }

absl::StatusOr<size_t> TextSource::Read(absl::Span<float> out) {
  if (!started_) {
    started_ = true;
    // Spreadsheet exports often begin with a UTF-8 byte order mark; it is not part of a value.
    ASSIGN_OR_RETURN(const absl::string_view head, reader_->Peek(kUtf8Bom.size()));
    if (head == kUtf8Bom) {
      char bom[kUtf8Bom.size()];
      RETURN_IF_ERROR(reader_->Read(absl::MakeSpan(bom)).status());
    }
  }
  size_t n = 0;
  while (n < out.size()) {
    ASSIGN_OR_RETURN(const bool more, NextValue(out[n]));
    if (!more) break;
    ++n;
  }
  return n;
}

absl::StatusOr<bool> TextSource::NextValue(float& value) {
  while (true) {
    if (pending_.empty()) {
      if (at_end_) {
        if (partial_.empty()) return false;
        // The input ended inside a token (no trailing newline).
        ASSIGN_OR_RETURN(value, ParseToken(partial_, partial_line_));
        partial_.clear();
        return true;
      }
      ASSIGN_OR_RETURN(pending_, reader_->ReadChunk());
      at_end_ = pending_.empty();
      continue;
    }
    if (in_comment_) {
      // Leave the newline in place: the separator scan below counts it.
      const size_t newline = pending_.find('\n');
      if (newline == absl::string_view::npos) {
        pending_ = {};
        continue;
      }
      in_comment_ = false;
      pending_.remove_prefix(newline);
      continue;
    }
    if (!partial_.empty()) {
      // Finish a token that the previous chunk cut short.
      const size_t end = FindSeparator(pending_);
      if (partial_.size() + end > kMaxTokenLength) return TokenTooLong(partial_line_);
      partial_.append(pending_.data(), end);
      pending_.remove_prefix(end);
      if (pending_.empty()) continue;  // Still no separator: the token goes on.
      ASSIGN_OR_RETURN(value, ParseToken(partial_, partial_line_));
      partial_.clear();
      return true;
    }
    size_t skip = 0;
    while (skip < pending_.size() && IsSeparator(pending_[skip])) {
      if (pending_[skip] == '\n') ++line_;
      ++skip;
    }
    pending_.remove_prefix(skip);
    if (pending_.empty()) continue;
    if (pending_[0] == '#') {
      in_comment_ = true;
      continue;
    }
    const size_t end = FindSeparator(pending_);
    if (end > kMaxTokenLength) return TokenTooLong(line_);
    if (end == pending_.size()) {
      // The chunk ends mid-token (or the input does): keep the piece for the next round.
      partial_.assign(pending_.data(), pending_.size());
      partial_line_ = line_;
      pending_ = {};
      continue;
    }
    ASSIGN_OR_RETURN(value, ParseToken(pending_.substr(0, end), line_));
    pending_.remove_prefix(end);
    return true;
  }
}

absl::StatusOr<float> TextSource::ParseToken(absl::string_view token, uint64_t line) const {
  absl::string_view number = token;
  // from_chars takes no '+'; strip one, but never before another sign ("+-1" stays invalid).
  if (number.size() > 1 && number[0] == '+' && number[1] != '+' && number[1] != '-') {
    number.remove_prefix(1);
  }
  const char* const end = number.data() + number.size();
  float value = 0.0f;
  const auto [ptr, error] = std::from_chars(number.data(), end, value);
  if (ptr == end && error == std::errc()) return value;
  if (ptr == end && error == std::errc::result_out_of_range) {
    // Too small for a subnormal: IEEE rounding gives a signed zero, which loses nothing a float32
    // could have held. Too large: an infinity would silently change the data, so refuse.
    if (LeadingDecimalExponent(number) < 0) return number[0] == '-' ? -0.0f : 0.0f;
    return absl::InvalidArgumentError(absl::StrCat(
        reader_->name(), ":", line, ": ", Quote(token),
        " is beyond the float32 range (largest finite magnitude 3.4028235e+38); write inf if "
        "infinity is meant"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      reader_->name(), ":", line, ": ", Quote(token),
      " is not a number; expected decimal float32 values (like 1.5, -2e-3, nan, inf) separated "
      "by whitespace, commas or semicolons, and '#' comments"));
}

absl::Status TextSource::TokenTooLong(uint64_t line) const {
  return absl::InvalidArgumentError(
      absl::StrCat(reader_->name(), ":", line, ": a token is longer than ", kMaxTokenLength,
                   " characters; is this really a text file of numbers?"));
}

}  // namespace gpureduce::client
