#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/backend.h"
#include "server/server_config.h"

namespace gpureduce::server {

// config.backend is "auto", "cpu" or "cuda". "auto" takes the GPU when this build and machine
// have one, else the CPU (with a warning); "cuda" without a usable GPU is an error.
absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(const ServerConfig& config);

}  // namespace gpureduce::server
