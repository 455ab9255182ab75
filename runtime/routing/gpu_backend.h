#pragma once

// What the routing backend needs of a backend of GPUs to choose where a request runs: each
// GPU's load, and a session on the GPU it chose. The CUDA backend is one; tests use fakes.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "runtime/backend.h"

namespace gpureduce::runtime {

// One GPU as the device choice weighs it.
struct GpuLoad {
  bool lost = false;               // failed for good: out of rotation
  uint64_t outstanding_bytes = 0;  // what the requests on it will move
};

class GpuBackend : public Backend {
 public:
  // Its GPUs, in a fixed order; `position` counts in it.
  virtual size_t gpu_count() const = 0;
  // Cheap: read for every GPU on every request.
  virtual GpuLoad Load(size_t position) const = 0;
  // A session on the GPU at `position`, whatever `spec.device` says; RESOURCE_EXHAUSTED when its
  // request slots are all taken.
  virtual absl::StatusOr<std::unique_ptr<ReduceSession>> OpenOn(size_t position,
                                                                const RequestSpec& spec) = 0;
};

}  // namespace gpureduce::runtime
