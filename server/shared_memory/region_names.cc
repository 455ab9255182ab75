#include "server/shared_memory/region_names.h"

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpureduce::server {
namespace {

// The first character outside [A-Za-z0-9._-], or npos.
size_t FirstBadCharacter(absl::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
      return i;
    }
  }
  return absl::string_view::npos;
}

absl::Status BadCharacter(absl::string_view what, absl::string_view text, size_t at) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s \"%s\" has %s at position %d; only letters, digits, '.', '_' and '-' are allowed", what,
      absl::CHexEscape(text), absl::CHexEscape(text.substr(at, 1)), at));
}

}  // namespace

absl::Status CheckRegionName(absl::string_view name) {
  if (name.empty() || name.size() > 128) {
    return absl::InvalidArgumentError(
        absl::StrCat("a region name has 1 to 128 characters; this one has ", name.size()));
  }
  if (const size_t at = FirstBadCharacter(name); at != absl::string_view::npos) {
    return BadCharacter("the region name", name, at);
  }
  return absl::OkStatus();
}

absl::Status CheckObjectKey(absl::string_view key) {
  if (key.empty() || key[0] != '/') {
    return absl::InvalidArgumentError(absl::StrCat(
        "the key \"", absl::CHexEscape(key),
        "\" must name a POSIX shared-memory object as shm_open does: \"/\" and then its name"));
  }
  const absl::string_view object = key.substr(1);
  if (object.empty() || object.size() > 255) {
    return absl::InvalidArgumentError(
        absl::StrCat("a shared-memory object's name has 1 to 255 characters after the \"/\"; \"",
                     absl::CHexEscape(key), "\" has ", object.size()));
  }
  if (object == "." || object == "..") {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", key, "\" is not a shared-memory object's name"));
  }
  if (const size_t at = FirstBadCharacter(object); at != absl::string_view::npos) {
    return BadCharacter("the key", key, at + 1);
  }
  return absl::OkStatus();
}

}  // namespace gpureduce::server
