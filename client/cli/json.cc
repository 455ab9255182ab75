#include "client/cli/json.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpureduce::cli {

std::string JsonString(absl::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string JsonObject::str() const { return absl::StrCat("{", body_, "}"); }

void JsonObject::Key(absl::string_view key) {
  if (!body_.empty()) body_ += ",";
  absl::StrAppend(&body_, JsonString(key), ":");
}

JsonObject& JsonObject::Add(absl::string_view key, double value) {
  Key(key);
  if (std::isnan(value)) {
    body_ += "\"NaN\"";
  } else if (std::isinf(value)) {
    body_ += value > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  } else {
    body_ += absl::StrFormat("%.17g", value);
  }
  return *this;
}

JsonObject& JsonObject::Add(absl::string_view key, int64_t value) {
  Key(key);
  absl::StrAppend(&body_, value);
  return *this;
}

JsonObject& JsonObject::Add(absl::string_view key, uint64_t value) {
  Key(key);
  absl::StrAppend(&body_, value);
  return *this;
}

JsonObject& JsonObject::Add(absl::string_view key, bool value) {
  Key(key);
  body_ += value ? "true" : "false";
  return *this;
}

JsonObject& JsonObject::Add(absl::string_view key, absl::string_view value) {
  Key(key);
  body_ += JsonString(value);
  return *this;
}

JsonObject& JsonObject::Add(absl::string_view key, const JsonObject& value) {
  return AddRaw(key, value.str());
}

JsonObject& JsonObject::AddRaw(absl::string_view key, absl::string_view json) {
  Key(key);
  absl::StrAppend(&body_, json);
  return *this;
}

}  // namespace gpureduce::cli
