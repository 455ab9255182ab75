#pragma once

// What the attack tests share: how to read an attack's outcome and a server's log, and how much
// slower and hungrier a sanitized build is.

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/attack/attacks.h"

namespace gpureduce::testing {

// ASan's allocator and quarantine make every allocation dearer and keep freed memory a while;
// bounds on memory and latency are this much wider in a sanitized build.
#if defined(GPUREDUCE_SANITIZED)
inline constexpr uint64_t kSanitizerScale = 4;
#else
inline constexpr uint64_t kSanitizerScale = 1;
#endif

// The sources attacks connect from, apart from the clients the tests serve (127.0.0.1).
inline constexpr char kAttacker[] = "127.0.0.2";
inline constexpr char kSecondAttacker[] = "127.0.0.3";

inline int LineCount(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

inline std::string Describe(const ConnectionOutcomes& o) {
  return absl::StrCat(o.connections, " connections: ", o.refused, " refused, ", o.goaways,
                      " sent away (", absl::StrJoin(o.goaway_reasons, "; "), "), ", o.closed,
                      " closed without a GOAWAY, ", o.failed, " not connected");
}

}  // namespace gpureduce::testing
