#pragma once

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "server/service_state.h"

namespace gpureduce::server {

struct ServerConfig {
  std::string listen = "127.0.0.1:50051";
  std::string backend = "auto";
  uint32_t worker_threads = 0;  // 0: one per hardware thread
  std::string devices = "all";  // GPUs to own: "all" or a list such as "0,2"
  uint32_t streams = 0;         // per GPU; 0: from the device (twice its copy engines, >= 4)
  uint32_t staging_buffers = 16;                      // per GPU
  uint64_t staging_buffer_bytes = uint64_t{4} << 20;  // each; pinned host + device
  ServiceLimits limits;
  // gRPC grows a connection's receive window to its bandwidth-delay estimate, which on loopback
  // reaches tens of MiB per connection and varies run to run; off, each stream reads about one
  // message ahead of the reactor and server memory stays fixed (docs/architecture.md).
  bool bdp_probe = false;
  std::string log_level = "info";
  absl::Duration grace_period = absl::Seconds(10);
  std::string port_file;           // where to write the bound port (useful with --listen=...:0)
  absl::Duration ready_delay = absl::ZeroDuration();  // hold NOT_SERVING this long after start
};

}  // namespace gpureduce::server
