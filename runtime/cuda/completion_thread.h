#pragma once

// Runs callbacks once the GPU work queued before them on a stream is done. RunAfter records an
// event on the stream, and this thread polls the pending events (cudaEventQuery) and runs each
// callback once its event has completed, with the stream's error if the stream failed, so a
// callback may call CUDA and gRPC. The callbacks of one stream run in the order they were
// queued, even when a later event is seen complete first (the GPU may finish between two
// queries): a request's last callback may free what its earlier ones touch. Polling sees a finished
// kernel within microseconds; a CUDA stream callback took tens (its own thread's wake-up), and held
// up its stream until it returned. The thread spins only while work is pending and completing
// (kSpin after the last progress), then polls every 20 us; with nothing pending it sleeps.

#include <cuda_runtime_api.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "runtime/session/completion_queue.h"

namespace gpureduce::runtime {

class CompletionThread final : public CompletionQueue {
 public:
  // Polls events of GPU `device`.
  explicit CompletionThread(int device = 0);
  // Runs what is posted and pending (the device's work must be over, or be able to end), then
  // joins.
  ~CompletionThread() override;
  CompletionThread(const CompletionThread&) = delete;
  CompletionThread& operator=(const CompletionThread&) = delete;

  // `callback` runs on this thread, exactly once: after everything queued on `stream` so far
  // has finished, with cudaSuccess or the error that stopped the stream; or, if the event
  // cannot be recorded, with that error once the stream's earlier callbacks have run. Call
  // with `stream`'s device current.
  void RunAfter(cudaStream_t stream, StreamDone callback) override;
  // RunAfter by `event`, recorded on `stream` after the work `callback` waits for: one CUDA call
  // fewer. Work queued on the stream after the event does not hold it up, but the callback
  // still runs after the stream's earlier callbacks. The caller keeps the event, and records it
  // again only after `callback` has run.
  void RunAfterEvent(cudaStream_t stream, cudaEvent_t event, StreamDone callback);

  // Runs `callback` on this thread soon (no GPU dependency).
  void Post(absl::AnyInvocable<void() &&> callback) override;

  // How long the thread keeps spinning after the last event it saw complete.
  static constexpr std::chrono::microseconds kSpin{200};

 private:
  struct Pending {
    cudaStream_t stream;
    cudaEvent_t event;  // null when it could not be recorded: then `error` is the status
    StreamDone callback;
    cudaError_t error = cudaSuccess;
    bool owned = true;  // the event goes back to free_events_ (not a caller's)
  };

  void Queue(Pending pending);
  void Loop();

  const int device_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<absl::AnyInvocable<void() &&>> posted_;
  std::deque<Pending> pending_;
  std::vector<cudaEvent_t> free_events_;  // recorded ones come back here once completed
  bool stopping_ = false;
  std::thread thread_;  // last: it starts once the state above exists
};

}  // namespace gpureduce::runtime
