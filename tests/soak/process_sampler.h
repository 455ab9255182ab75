#pragma once

// What a soak watches in the server process: resident memory, open files, threads and (with a
// GPU) the device memory it holds, read from /proc and nvidia-smi.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace gpureduce::testing::soak {

struct ProcessSample {
  double seconds = 0;  // since the soak began
  uint64_t rss_kib = 0;
  uint64_t open_files = 0;
  uint64_t threads = 0;
  // Of `threads`, gRPC's default executor: it starts threads as work queues up, up to two per
  // core (grpc_core::Executor's fixed cap), and keeps them, so it is bounded but not flat.
  uint64_t grpc_executor_threads = 0;
  std::optional<uint64_t> gpu_mib;  // the process's memory on the GPU, when asked for
};

// Reads one sample of `pid`; `with_gpu` asks nvidia-smi for the process's GPU memory.
absl::StatusOr<ProcessSample> SampleProcess(pid_t pid, bool with_gpu);

// The most threads gRPC's default executor starts in `pid`: two per core it may run on.
uint64_t GrpcExecutorCap(pid_t pid);

}  // namespace gpureduce::testing::soak
