#pragma once

// Reduce: the whole array in one message, up to the unary limit (larger arrays must stream), or
// a reference to it in a registered shared-memory region. The method is registered as a stream
// of one message each way (reducer_service.h), so the call is admitted before its message is
// read: gRPC would otherwise read a unary request whole, refused or not, before the server sees
// the call. The message must arrive within the idle watch's limit (stream_idle_watch.h).

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>

#include "gpureduce/v1/reduce.grpc.pb.h"
#include "grpcpp/support/server_callback.h"
#include "server/received_message.h"
#include "server/reduce_call.h"
#include "server/service_state.h"
#include "server/shared_memory/region.h"
#include "server/stream_idle_watch.h"

namespace gpureduce::server {

class ReduceUnaryReactor final : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>,
                                 public StreamIdleWatch::Stream {
 public:
  ReduceUnaryReactor(ServiceState& state, grpc::CallbackServerContext* context);

  void OnReadDone(bool ok) override;
  // A cancelled call still finishes once the backend is done with the request's memory.
  void OnCancel() override;
  void OnDone() override;
  // The reactions above are short and never wait, so the handler may run them on the thread
  // that completes the operation instead of handing each to gRPC's executor: a thread wake-up
  // per request otherwise (admitted_unary_handler.h).
  bool InternalInlineable() override { return true; }

 private:
  // The idle watch's side (the reactor lives until gRPC and the watch are both done with it).
  void OnIdle(absl::Duration limit, int64_t since, bool full) override;
  void Ref() override { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() override;

  // Where the call is: waiting for its message, working on it, or ending. The read's
  // completion, the idle watch and a cancel race for a waiting call; the first to move it on
  // decides how it ends.
  enum class Phase { kWaiting, kWorking, kEnding };
  // Moves a waiting call to `next`; false when something else moved it first.
  bool LeaveWaiting(Phase next);

  absl::Status Start();
  absl::Status StartShared(const v1::ReduceRequest& request);
  // Ends the call: answers once the backend is done with the request's memory.
  void Conclude(absl::Status status);

  ReduceCall call_;
  grpc::CallbackServerContext* const context_;
  StreamIdleWatch& idle_watch_;
  std::atomic<int> refs_{1};  // gRPC's until OnDone, and the idle watch's while it tells
  std::mutex mu_;
  Phase phase_ = Phase::kWaiting;  // guarded by mu_
  ReceivedMessage<v1::ReduceRequest> request_;
  v1::ReduceResponse response_;
  grpc::ByteBuffer response_bytes_;
  // The region a shared-memory request reads: open, and counted in use, until the call is done.
  std::optional<Region::Use> region_;
};

}  // namespace gpureduce::server
