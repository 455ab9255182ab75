#pragma once

// What the service needs from a compute backend (CPU now, CUDA next): the kernels it runs, the
// devices it owns, and per-request sessions that reduce a stream of chunks without blocking.

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/kernel_registry.h"
#include "kernels/partial.h"

namespace gpureduce::server {

// A request after validation: everything a backend needs to start it.
struct RequestSpec {
  kernels::Op op;
  const kernels::KernelInfo* kernel;  // resolved; never "auto"
  uint32_t block_size;                // 0: the kernel's default
  uint64_t expected_count;            // 0: not declared
};

// Where the time of a request went, summed over its chunks.
struct BackendTiming {
  std::chrono::nanoseconds queue{0};
  std::chrono::nanoseconds h2d{0};
  std::chrono::nanoseconds kernel{0};
  std::chrono::nanoseconds d2h{0};
};

struct DeviceDescription {
  int index = 0;
  std::string name;
  uint64_t memory_bytes = 0;
  int multiprocessors = 0;
  double peak_bandwidth_gbps = 0;
};

using ConsumeDone = absl::AnyInvocable<void(absl::Status) &&>;

// One request's running reduction. Chunks arrive in order; at most one Consume is in flight.
class ReduceSession {
 public:
  virtual ~ReduceSession() = default;

  // Reduces `data`, the elements following everything consumed so far. `data` stays valid until
  // `done` runs; `done` runs on a backend thread and must not block.
  virtual void Consume(std::span<const float> data, ConsumeDone done) = 0;

  // The combined partial of everything consumed; call only when no Consume is in flight.
  virtual kernels::Partial partial() const = 0;
  virtual BackendTiming timing() const = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual kernels::BackendKind kind() const = 0;
  virtual std::vector<DeviceDescription> devices() const = 0;
  // The device a request runs on, as the response names it.
  virtual std::string device_name() const = 0;
  // What "auto" resolves to.
  virtual const kernels::KernelInfo& default_kernel() const = 0;
  // Threads (CPU) or streams (GPU) that compute requests.
  virtual uint32_t workers() const = 0;

  // Reduces a known input and compares with the known answer; the server reports SERVING only
  // after this passes.
  virtual absl::Status SelfCheck() = 0;

  virtual absl::StatusOr<std::unique_ptr<ReduceSession>> Open(const RequestSpec& spec) = 0;

  // The catalogue entries this backend can run.
  std::vector<const kernels::KernelInfo*> Kernels() const;
};

}  // namespace gpureduce::server
