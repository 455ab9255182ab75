#pragma once

// What every call of the Reducer service shares: the backend, the limits, admission and
// readiness.

#include <atomic>
#include <cstdint>

#include "runtime/backend.h"
#include "server/admission.h"

namespace gpureduce::server {

struct ServiceLimits {
  uint64_t max_request_bytes = uint64_t{64} << 20;  // unary payload
  uint64_t max_chunk_bytes = uint64_t{16} << 20;    // payload of one stream message
  uint32_t max_concurrent_requests = 32;
};

struct ServiceState {
  ServiceState(runtime::Backend& backend_in, const ServiceLimits& limits_in)
      : backend(backend_in), limits(limits_in), admission(limits_in.max_concurrent_requests) {}

  runtime::Backend& backend;
  const ServiceLimits limits;
  Admission admission;
  // False until the backend's self-check passes; Reduce calls answer UNAVAILABLE until then.
  std::atomic<bool> ready{false};
};

}  // namespace gpureduce::server
