#pragma once

#include "server/server_config.h"

namespace gpureduce::server {

// Starts the server, serves until SIGINT or SIGTERM, then drains in-flight requests for up to
// the grace period. Returns the process exit code. Call before any other thread exists: it
// blocks the two signals for the whole process so that only its waiter receives them.
int RunServer(const ServerConfig& config);

}  // namespace gpureduce::server
