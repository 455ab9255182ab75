#pragma once

// Everything gpureduce-server is configured with (main.cc binds the flags to it).

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "runtime/backend_factory.h"
#include "server/service_state.h"

namespace gpureduce::server {

struct ServerConfig {
  std::string listen = "127.0.0.1:50051";
  runtime::BackendOptions runtime;  // runtime.sessions follows limits.max_concurrent_requests
  ServiceLimits limits;
  // gRPC grows a connection's receive window to its bandwidth-delay estimate, which on loopback
  // reaches tens of MiB per connection and varies run to run; off, each stream reads about one
  // message ahead of the reactor and server memory stays fixed (docs/architecture.md).
  bool bdp_probe = false;
  std::string log_level = "info";
  absl::Duration grace_period = absl::Seconds(10);
  std::string port_file;  // where to write the bound port (useful with --listen=...:0)
  absl::Duration ready_delay = absl::ZeroDuration();  // hold NOT_SERVING this long after start
};

}  // namespace gpureduce::server
