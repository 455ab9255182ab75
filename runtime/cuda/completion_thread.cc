#include "runtime/cuda/completion_thread.h"

#include <memory>
#include <utility>

namespace gpureduce::runtime {
namespace {

struct PendingCallback {
  CompletionThread* owner;
  CompletionThread::StreamDone callback;
};

}  // namespace

void CompletionThread::RunAfter(cudaStream_t stream, StreamDone callback) {
  auto pending = std::make_unique<PendingCallback>(PendingCallback{this, std::move(callback)});
  const cudaError_t error =
      cudaStreamAddCallback(stream, &CompletionThread::OnStreamReached, pending.get(), 0);
  if (error == cudaSuccess) {
    pending.release();  // OnStreamReached owns it now
    return;
  }
  Post([callback = std::move(pending->callback), error]() mutable { std::move(callback)(error); });
}

void CUDART_CB CompletionThread::OnStreamReached(cudaStream_t, cudaError_t status, void* item) {
  std::unique_ptr<PendingCallback> pending(static_cast<PendingCallback*>(item));
  pending->owner->Post(
      [callback = std::move(pending->callback), status]() mutable { std::move(callback)(status); });
}

}  // namespace gpureduce::runtime
