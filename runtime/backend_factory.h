#pragma once

// Chooses and starts the compute backend from typed options (the server turns its flags into
// them): the CPU backend, or on a machine with GPUs the routing backend over the CPU and the
// CUDA backend.

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/backend.h"
#include "runtime/device_options.h"

namespace gpureduce::runtime {

enum class BackendChoice {
  kAuto,  // the GPUs when this build and machine have one, else the CPU (with a warning)
  kCpu,
  kCuda,  // without a usable GPU: an error
};

struct BackendOptions {
  BackendChoice kind = BackendChoice::kAuto;
  // The CPU backend's threads, also those of the CPU beside the GPUs; 0: one per hardware thread.
  uint32_t worker_threads = 0;
  std::vector<int> devices;  // the GPUs to own, by CUDA ordinal; empty: every visible one
  DeviceOptions device;      // per GPU
  // With GPUs: `auto` requests go where the self-check measured them to end first, by their
  // data's location and size (RoutingBackend): the CPU, a GPU, or both at once.
  bool measured_placement = true;
  // With GPUs, without measured_placement (or where measuring failed): `auto` requests of fewer
  // bytes than this (when their size is known up front: unary, or a stream's expected_count) run
  // on the CPU; 0: every one on a GPU. On the H100 host the CPU backend's 16 threads beat the
  // copy, the launch and the answer at every unary size (docs/load.md).
  uint64_t auto_cpu_below_bytes = uint64_t{128} << 20;
  // With several GPUs: a request known to carry at least this many bytes (and pinned to no GPU)
  // is reduced on every GPU at once; 0: each request on one GPU.
  uint64_t split_above_bytes = uint64_t{64} << 20;
  // With GPUs: the share of an `auto` request reading system shared memory, placed on the CPU and
  // a GPU at once, that the CPU reduces while the GPU reads the rest; 0: a GPU alone; 1: the
  // CPU alone; below 0: measured at the self-check (RoutingBackend).
  double host_cpu_share = -1;
  // Regions of system shared memory can reach the server (it allows shared memory): the
  // self-check measures the costs of reading them.
  bool host_regions = true;
  // With GPUs: array requests (axes or segments, issue 23) run on the GPUs' array kernels, as
  // whole arrays' requests do (an `auto` one placed as theirs are); off: on the CPU's kernel. Off
  // by default until the array kernels have run on a GPU host (docs/array-api.md).
  bool gpu_arrays = false;
  // With GPUs: small unary single_pass requests gathered into one launch per GPU (SmallBatcher,
  // runtime/batching/); off by default until measured on a GPU host.
  bool batch_small_requests = false;
  BatchOptions batch;
};

// Whether this build has the CUDA backend (it was built with a CUDA compiler).
bool HasCudaBackend();

absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(const BackendOptions& options);

}  // namespace gpureduce::runtime
