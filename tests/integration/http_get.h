#pragma once

// A plain HTTP GET for the system tests (the metrics endpoint), through civetweb's client.

#include <string>

#include "absl/status/statusor.h"

namespace gpureduce::testing {

// The body of http://127.0.0.1:<port><path>, or an error for a failed connection or a status
// other than 200.
absl::StatusOr<std::string> HttpGet(int port, const std::string& path);

}  // namespace gpureduce::testing
