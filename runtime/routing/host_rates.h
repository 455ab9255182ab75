#pragma once

// How fast the CPU backend and one GPU each reduce a region of system shared memory on this host,
// measured through the paths such requests take (the CPU's pread of the object, the GPU's copies
// from its pinned pages), so that a request reading one can be cut in the shares that end at
// once (RoutingBackend).

#include <cstdint>

#include "absl/status/statusor.h"
#include "runtime/backend.h"
#include "runtime/routing/gpu_backend.h"

namespace gpureduce::runtime {

struct HostRates {
  uint64_t bytes = 0;   // of the object each read
  double cpu_gbps = 0;  // the CPU backend's SUM of it, the best of a few rounds
  double gpu_gbps = 0;  // the first GPU's
  // The CPU's share of a region both read at once, so that both ends come together.
  double CpuShare() const { return cpu_gbps / (cpu_gbps + gpu_gbps); }
};

// Reduces an object of `bytes` (a memfd, pinned by `gpus`) a few times on each alone. Takes a
// few hundred milliseconds; for the self-check.
absl::StatusOr<HostRates> MeasureHostRates(Backend& cpu, GpuBackend& gpus,
                                           uint64_t bytes = uint64_t{256} << 20);

}  // namespace gpureduce::runtime
