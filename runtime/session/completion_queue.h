#pragma once

// What runs a session's callbacks once the GPU work queued before them on a stream is done: the
// device's CompletionThread (runtime/cuda/completion_thread.h), or a fake in tests. Named without
// the CUDA headers, so a session's scheduler and its tests build where there is no CUDA.

#include "absl/functional/any_invocable.h"

struct CUstream_st;  // CUDA's stream: cudaStream_t is a CUstream_st*

namespace gpureduce::runtime {

using StreamHandle = CUstream_st*;
// A stream's state when a callback runs: kGpuSuccess (cudaSuccess), or the cudaError_t that
// stopped it.
using GpuStatus = int;
inline constexpr GpuStatus kGpuSuccess = 0;

class CompletionQueue {
 public:
  using StreamDone = absl::AnyInvocable<void(GpuStatus stream_status) &&>;

  virtual ~CompletionQueue() = default;

  // `callback` runs exactly once, off the caller's thread: after everything queued on `stream`
  // so far has finished, with kGpuSuccess or the error that stopped the stream. One stream's
  // callbacks run in the order they were queued.
  virtual void RunAfter(StreamHandle stream, StreamDone callback) = 0;

  // Runs `callback` on the queue's thread soon (no GPU dependency).
  virtual void Post(absl::AnyInvocable<void() &&> callback) = 0;
};

}  // namespace gpureduce::runtime
