#pragma once

// Chooses and starts the compute backend from the server's settings.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/backend.h"

namespace gpureduce::runtime {

struct BackendOptions {
  // "auto" takes the GPU when this build and machine have one, else the CPU (with a warning);
  // "cuda" without a usable GPU is an error; "cpu".
  std::string kind = "auto";
  uint32_t worker_threads = 0;    // CPU backend; 0: one per hardware thread
  std::string devices = "all";    // GPUs to own: "all" or a list such as "0,2"
  uint32_t streams = 0;           // per GPU; 0: from the device (twice its copy engines, >= 4)
  uint32_t staging_buffers = 16;  // per GPU
  uint64_t staging_buffer_bytes = uint64_t{4} << 20;  // each; pinned host + device
  uint32_t sessions = 32;     // requests in progress per GPU (the server's admission limit)
  uint32_t copy_threads = 0;  // per GPU; 0: half the hardware threads, at least 4
  // CUDA backend: `auto` requests of fewer bytes than this (when their size is known up front:
  // unary, or a stream's expected_count) run on the CPU; 0: every one on the GPU.
  // The measured crossover (docs/load.md): on the H100 host the CPU backend's 16 threads beat the
  // copy, the launch and the answer at every unary size, so by default `auto` sends every
  // request of known size up to twice the unary limit (64 MiB) to the CPU.
  uint64_t auto_cpu_below_bytes = uint64_t{128} << 20;
  // CUDA backend with several GPUs: a request known to carry at least this many bytes (and
  // pinned to no GPU) is reduced on every GPU at once; 0: each request on one GPU.
  uint64_t split_above_bytes = uint64_t{64} << 20;
};

absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(const BackendOptions& options);

}  // namespace gpureduce::runtime
