#pragma once

// gpureduce-load's engine: requests on gRPC's callback API (no thread per request), spread over
// several channels, either closed loop (a fixed number in flight, each answer starting the next)
// or open loop (sent on a schedule whatever the answers do; each latency counts from the
// scheduled send time, so a server that falls behind cannot hide its queue by slowing the
// sender). Every answer is checked against the workload's expectation.

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/channel_security.h"
#include "client/load/latency_histogram.h"
#include "client/load/workload.h"

namespace gpureduce::client {

struct LoadOptions {
  std::string target = "127.0.0.1:50051";
  ChannelSecurity security;                     // TLS and a bearer token, when the server asks
  uint32_t connections = 1;                     // channels; requests go round robin over them
  uint32_t concurrency = 1;                     // closed loop: requests in flight
  double rate = 0;                              // > 0: open loop at this many requests per second
  absl::Duration duration = absl::Seconds(10);  // measured time (0 with `requests`: no limit)
  uint64_t requests = 0;                        // > 0: stop after this many measured requests
  absl::Duration warmup = absl::Seconds(1);     // sent first, not measured
  absl::Duration timeout = absl::Seconds(30);   // per request
  uint32_t max_outstanding = 10000;             // open loop: more in flight are not sent
  // Called about once a second while the load runs, with a one-line summary.
  std::function<void(const std::string& line)> progress;
};

// The server's own account of where the time went (ReduceResponse.timing), in nanoseconds.
struct ServerBreakdown {
  LatencyHistogram server, queue, h2d, kernel, d2h;
};

struct LoadResult {
  double seconds = 0;      // the measured window: first measured send to last answer
  uint64_t ok = 0;         // answered OK and right (or not checkable: the sink)
  uint64_t failed = 0;     // answered with a gRPC error
  uint64_t wrong = 0;      // answered OK with a wrong result (also counted in `codes`)
  uint64_t unchecked = 0;  // OK answers from the sink, which computes nothing
  uint64_t not_sent = 0;   // open loop: due while max_outstanding were in flight
  uint64_t bytes = 0;      // payload bytes of the OK requests
  std::map<std::string, uint64_t> codes;  // "OK", "RESOURCE_EXHAUSTED", ..., "WRONG_ANSWER"
  std::string first_error;                // an example of each kind, for the report
  std::string first_wrong;
  LatencyHistogram latency;             // client-side, of every measured answer (errors too)
  LatencyHistogram ok_latency;          // of the OK answers alone
  LatencyHistogram error_latency;       // of the gRPC errors alone (how fast refusals come)
  ServerBreakdown breakdown;            // of the OK answers
  std::string backend, kernel, device;  // as the first OK answer names them
  // OK answers by the devices that reduced them (device_indices joined by "+": "0", "1", "0+1").
  std::map<std::string, uint64_t> devices;
};

absl::StatusOr<LoadResult> RunLoad(const LoadOptions& options, const Workload& workload);

}  // namespace gpureduce::client
