#pragma once

// How the CUDA backend sizes each GPU's resources: plain numbers, so that the server can set
// them whether or not this build has the CUDA backend. Each default is written here only.

#include <chrono>
#include <cstdint>

namespace gpureduce::runtime {

// How a GPU gathers small requests into one launch (runtime/batching/small_batcher.h).
struct BatchOptions {
  // The defaults cut the GPU time of 1 KiB requests at concurrency 64 by 4x or more on an
  // H200 (docs/gpu-backend.md); a shorter window or more in flight trade less of it for latency.
  std::chrono::microseconds window{100};  // the longest a request waits for others
  uint64_t max_request_bytes = 64 << 10;  // larger requests run alone
  uint32_t in_flight = 1;                 // batches running at once before new ones wait
};

struct DeviceOptions {
  uint32_t streams = 0;  // 0: twice the copy engines, at least 4
  // The teaching ladder's requests share these low-priority streams, so they can neither hold
  // every stream nor delay the production kernels' blocks (which run on high-priority ones).
  uint32_t ladder_streams = 2;
  uint32_t staging_buffers = 16;                      // requests beyond them wait for one
  uint64_t staging_buffer_bytes = uint64_t{4} << 20;  // each; pinned host + device
  uint32_t sessions = 32;                             // requests in progress on this device at once
  uint32_t copy_threads = 0;  // threads that copy chunks into pinned memory; 0: half the
                              // hardware threads, at least 4
};

}  // namespace gpureduce::runtime
