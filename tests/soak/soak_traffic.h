#pragma once

// The soak's traffic: one scenario at a time, picked at random, each with the outcome it must
// have. Valid requests (every op, unary and streams, awkward sizes and chunkings) must come back
// right against the independent reference; bad requests, cancellations, deadlines and stalled
// streams must fail with exactly the code the contract gives them.

#include <cstdint>
#include <random>
#include <string>

#include "absl/time/time.h"
#include "client/reducer_client.h"

namespace gpureduce::testing::soak {

struct TrafficOptions {
  // The server's --stream-idle-timeout; 0 leaves stalled streams out of the mix.
  absl::Duration idle_timeout = absl::ZeroDuration();
  // The server's --max-request-bytes, for the over-the-limit request.
  uint64_t max_request_bytes = 0;
  // Accumulating ops within this of the reference (relative to its scale).
  double tolerance = 1e-9;
};

struct Outcome {
  std::string scenario;  // "unary", "stream", "bad", "cancel", "deadline", "stall"
  std::string detail;    // what was sent, e.g. "argmin n=31"
  std::string problem;   // empty when the outcome was the expected one
};

class Traffic {
 public:
  Traffic(client::ReducerClient& reducer, uint64_t seed, TrafficOptions options);

  // Runs one scenario and says whether it ended as it must.
  Outcome Next();

 private:
  Outcome Unary();
  Outcome Stream();
  Outcome BadRequest();
  Outcome Cancel();
  Outcome Deadline();
  Outcome Stall();

  client::ReducerClient& reducer_;
  std::mt19937_64 random_;
  TrafficOptions options_;
};

}  // namespace gpureduce::testing::soak
