#include "client/input/py_literal.h"

#include <cstddef>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace gpureduce::client {
namespace {

constexpr int kMaxDepth = 16;

class Parser {
 public:
  explicit Parser(absl::string_view text) : text_(text) {}

  bool ParseDict(std::vector<std::pair<std::string, PyLiteral>>& entries) {
    if (!Consume('{')) return Fail("expected '{'");
    while (!Consume('}')) {
      PyLiteral key;
      if (!ParseValue(key, 0)) return false;
      if (key.kind != PyLiteral::Kind::kString) return Fail("expected a quoted key");
      if (!Consume(':')) return Fail("expected ':'");
      PyLiteral value;
      if (!ParseValue(value, 0)) return false;
      entries.emplace_back(std::move(key.text), std::move(value));
      if (!Consume(',') && !Peek('}')) return Fail("expected ',' or '}'");
    }
    SkipSpace();
    return pos_ == text_.size() || Fail("unexpected text after '}'");
  }

  const std::string& error() const { return error_; }

 private:
  bool ParseValue(PyLiteral& value, int depth) {
    SkipSpace();
    if (depth > kMaxDepth) return Fail("nesting too deep");
    if (pos_ >= text_.size()) return Fail("unexpected end");
    const char c = text_[pos_];
    if (c == '\'' || c == '"') return ParseString(value);
    if (c >= '0' && c <= '9') return ParseInt(value);
    if (c == '(' || c == '[') {
      const char close = c == '(' ? ')' : ']';
      value.kind = c == '(' ? PyLiteral::Kind::kTuple : PyLiteral::Kind::kList;
      ++pos_;
      while (!Consume(close)) {
        value.items.emplace_back();
        if (!ParseValue(value.items.back(), depth + 1)) return false;
        if (!Consume(',') && !Peek(close)) return Fail("expected ',' or a closing bracket");
      }
      return true;
    }
    if (ConsumeWord("True")) {
      value.kind = PyLiteral::Kind::kBool;
      value.boolean = true;
      return true;
    }
    if (ConsumeWord("False")) {
      value.kind = PyLiteral::Kind::kBool;
      return true;
    }
    if (ConsumeWord("None")) {
      value.kind = PyLiteral::Kind::kNone;
      return true;
    }
    return Fail("expected a string, integer, tuple, list, True, False or None");
  }

  bool ParseString(PyLiteral& value) {
    const char quote = text_[pos_++];
    value.kind = PyLiteral::Kind::kString;
    for (; pos_ < text_.size() && text_[pos_] != quote; ++pos_) {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
      value.text.push_back(text_[pos_]);
    }
    if (pos_ >= text_.size()) return Fail("unterminated string");
    ++pos_;
    return true;
  }

  bool ParseInt(PyLiteral& value) {
    value.kind = PyLiteral::Kind::kInt;
    for (; pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9'; ++pos_) {
      const uint64_t digit = static_cast<uint64_t>(text_[pos_] - '0');
      if (value.integer > (std::numeric_limits<uint64_t>::max() - digit) / 10) {
        return Fail("integer too large");
      }
      value.integer = value.integer * 10 + digit;
    }
    if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;  // Python 2 longs: "(3L, 4L)".
    return true;
  }

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Peek(char c) {
    SkipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool Consume(char c) {
    if (!Peek(c)) return false;
    ++pos_;
    return true;
  }
  bool ConsumeWord(absl::string_view word) {
    if (!absl::StartsWith(text_.substr(pos_), word)) return false;
    pos_ += word.size();
    return true;
  }
  bool Fail(absl::string_view what) {
    if (error_.empty()) error_ = absl::StrCat(what, " at offset ", pos_);
    return false;
  }

  absl::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace

absl::StatusOr<std::vector<std::pair<std::string, PyLiteral>>> ParsePyDict(absl::string_view text) {
  std::vector<std::pair<std::string, PyLiteral>> entries;
  Parser parser(text);
  if (!parser.ParseDict(entries)) return absl::InvalidArgumentError(parser.error());
  return entries;
}

}  // namespace gpureduce::client
