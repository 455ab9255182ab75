#pragma once

// A minimal JSON object writer for --json output. Non-finite numbers are written as the
// strings "NaN", "Infinity" and "-Infinity", as proto3's JSON mapping does.

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace gpureduce::cli {

class JsonObject {
 public:
  JsonObject& Add(absl::string_view key, double value);
  JsonObject& Add(absl::string_view key, int64_t value);
  JsonObject& Add(absl::string_view key, uint64_t value);
  JsonObject& Add(absl::string_view key, uint32_t value) { return Add(key, uint64_t{value}); }
  JsonObject& Add(absl::string_view key, bool value);
  JsonObject& Add(absl::string_view key, absl::string_view value);
  JsonObject& Add(absl::string_view key, const char* value) {
    return Add(key, absl::string_view(value));
  }
  JsonObject& Add(absl::string_view key, const JsonObject& value);
  // `json` must already be valid JSON (an array, say).
  JsonObject& AddRaw(absl::string_view key, absl::string_view json);

  std::string str() const;

 private:
  void Key(absl::string_view key);
  std::string body_;
};

std::string JsonString(absl::string_view text);

}  // namespace gpureduce::cli
