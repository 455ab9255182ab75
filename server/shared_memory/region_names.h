#pragma once

// The names a client may give: a region's name in the server, and the POSIX shared-memory
// object it maps (one path component under /dev/shm, nothing that could reach elsewhere).

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace gpureduce::server {

// 1-128 characters of [A-Za-z0-9._-].
absl::Status CheckRegionName(absl::string_view name);

// "/" then 1-255 characters of [A-Za-z0-9._-], not "." or "..": no further "/", so no path.
absl::Status CheckObjectKey(absl::string_view key);

}  // namespace gpureduce::server
