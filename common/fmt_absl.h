#pragma once

// Lets spdlog/fmt format absl::string_view, which Debian's abseil defines as its own class
// (ABSL_OPTION_USE_STD_STRING_VIEW is 0), so status messages and names log directly.

#include "absl/strings/string_view.h"
#include "fmt/format.h"

template <>
struct fmt::formatter<absl::string_view> : fmt::formatter<fmt::string_view> {
  template <typename FormatContextT>
  auto format(absl::string_view text, FormatContextT& context) const {
    return fmt::formatter<fmt::string_view>::format(fmt::string_view(text.data(), text.size()),
                                                    context);
  }
};
