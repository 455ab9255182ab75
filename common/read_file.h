#pragma once

// A whole small file (certificates, keys, tokens) as text, with an error that names what it was
// for.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpureduce {

// NOT_FOUND "cannot read the <what> file <path>" when it cannot be opened.
absl::StatusOr<std::string> ReadTextFile(const std::string& path, absl::string_view what);

}  // namespace gpureduce
