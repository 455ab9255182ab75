#pragma once

// Runs callbacks once the GPU work queued before them on a stream is done. CUDA stream callbacks
// may not call CUDA, and a slow one stalls its stream, so they only hand the callback to this
// thread, which runs it (and may call CUDA and gRPC). Stream callbacks (not host functions) are
// used because they also run, with the error, when the CUDA context has failed.

#include <cuda_runtime_api.h>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "common/thread_pool.h"

namespace gpureduce::runtime {

class CompletionThread {
 public:
  CompletionThread() = default;

  using StreamDone = absl::AnyInvocable<void(cudaError_t stream_status) &&>;

  // `callback` runs on this thread, exactly once: after everything queued on `stream` so far
  // has finished, with cudaSuccess or the error that stopped the stream; or at once with the
  // error if the callback cannot be queued.
  void RunAfter(cudaStream_t stream, StreamDone callback);

  // Runs `callback` on this thread soon (no GPU dependency).
  void Post(absl::AnyInvocable<void() &&> callback) { thread_.Submit(std::move(callback)); }

 private:
  static void CUDART_CB OnStreamReached(cudaStream_t stream, cudaError_t status, void* item);

  ThreadPool thread_{1};  // one thread: callbacks run in the order streams reach them
};

}  // namespace gpureduce::runtime
