#pragma once

// What every call of the Reducer service shares: the backend, the limits, admission, the idle
// watch, the metrics, the failure log, the connections and readiness.

#include <atomic>
#include <climits>
#include <cstdint>

#include "absl/time/time.h"
#include "runtime/backend.h"
#include "server/admission.h"
#include "server/auth/token_authenticator.h"
#include "server/connections/connection_gate.h"
#include "server/failure_log.h"
#include "server/metrics/server_metrics.h"
#include "server/shared_memory/region_registry.h"
#include "server/stream_idle_watch.h"

namespace gpureduce::server {

struct ServiceLimits {
  // Clients stream what exceeds a chunk (1 MiB in the CLI, the load tester and the Python
  // client); these bound what each admitted call may hold of a message still arriving.
  uint64_t max_request_bytes = uint64_t{4} << 20;  // unary payload
  uint64_t max_chunk_bytes = uint64_t{4} << 20;    // payload of one stream message
  uint32_t max_concurrent_requests = 32;
  // An array request's results (and its open accumulators) may take at most this; larger are
  // refused before any data is read.
  uint64_t max_result_bytes = uint64_t{64} << 20;
  // 0: three quarters of max_concurrent_requests, so one client always leaves room for others.
  uint32_t max_requests_per_client = 0;
  // A call whose next message does not arrive within this long is ended (CANCELLED); 0: never.
  absl::Duration stream_idle_timeout = absl::Seconds(30);
  // The same, while the server is full (a call was refused for it moments ago); 0: as above.
  absl::Duration stream_idle_timeout_when_full = absl::Seconds(1);

  // The largest message gRPC receives whole (so the service can refuse it with a precise
  // message): twice the larger payload limit, and 1 MiB for the rest of the message. Beyond it
  // gRPC refuses the message itself, and the memory guard evicts a connection still sending it.
  uint64_t TransportLimit() const {
    const uint64_t largest =
        max_request_bytes > max_chunk_bytes ? max_request_bytes : max_chunk_bytes;
    const uint64_t limit = 2 * largest + (uint64_t{1} << 20);
    return limit < INT32_MAX ? limit : INT32_MAX;
  }

  uint32_t PerClientLimit() const {
    if (max_requests_per_client != 0) return max_requests_per_client;
    return max_concurrent_requests > 1 ? max_concurrent_requests * 3 / 4 : 1;
  }
};

struct ServiceState {
  ServiceState(runtime::Backend& backend_in, const ServiceLimits& limits_in,
               const RegionLimits& regions_in = {})
      : backend(backend_in),
        limits(limits_in),
        admission(limits_in.max_concurrent_requests, limits_in.PerClientLimit()),
        idle_watch(limits_in.stream_idle_timeout, limits_in.stream_idle_timeout_when_full),
        regions(regions_in) {}

  runtime::Backend& backend;
  const ServiceLimits limits;
  Admission admission;
  StreamIdleWatch idle_watch;
  ServerMetrics metrics;
  FailureLog failures;     // what clients did wrong, at a rate no client can flood
  RegionRegistry regions;  // shared memory clients registered
  // The connections the server accepted; null where calls do not come through one (tests).
  ConnectionGate* gate = nullptr;
  // The bearer tokens Reducer calls must carry; null: none asked for.
  const TokenAuthenticator* tokens = nullptr;
  // What GetServerInfo tells clients: the --listen-unix socket's absolute path ("": none), and
  // an id of this process, by which a client tells that the socket's server is the one it asked.
  std::string unix_socket;
  std::string instance_id;
  // False until the backend's self-check passes; Reduce calls answer UNAVAILABLE until then.
  std::atomic<bool> ready{false};
};

}  // namespace gpureduce::server
