#pragma once

// ReduceStream: the spec in the first chunk, data in any chunk, two message buffers whose use
// StreamFlow decides (stream_flow.h), so a stream of any length runs in fixed memory. A stream
// whose client sends nothing for --stream-idle-timeout is ended (stream_idle_watch.h).

#include <atomic>
#include <mutex>

#include "absl/status/status.h"
#include "gpureduce/v1/reduce.grpc.pb.h"
#include "grpcpp/support/server_callback.h"
#include "server/received_message.h"
#include "server/reduce_call.h"
#include "server/service_state.h"
#include "server/stream_flow.h"
#include "server/stream_idle_watch.h"

namespace gpureduce::server {

class ReduceStreamReactor final : public grpc::ServerReadReactor<grpc::ByteBuffer>,
                                  public StreamIdleWatch::Stream {
 public:
  // `response` is the raw call's (received_message.h says why raw).
  ReduceStreamReactor(ServiceState& state, grpc::CallbackServerContext* context,
                      grpc::ByteBuffer* response);

  void OnReadDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  // The idle watch's side: the reactor lives until gRPC is done with it and the watch has
  // released it.
  void OnIdle(absl::Duration limit, int64_t since, bool full) override;
  void Ref() override { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() override;
  // Starts a read into `buffer`; the stream waits on its client until it completes.
  void Read(int buffer);

  absl::Status AcceptChunk(int buffer);
  // Carries out a step of the flow, with mu_ released, and the steps that arise on this thread
  // while it does (RunStep each).
  void Run(StreamFlow::Step step);
  void RunStep(StreamFlow::Step step);
  void OnComputeDone(absl::Status status);
  // Ends the RPC once the backend has finished with the request.
  void Conclude(absl::Status status);

  ReduceCall call_;
  StreamIdleWatch& idle_watch_;
  ServerMetrics& metrics_;
  std::atomic<int> refs_{1};  // gRPC's until OnDone, and the idle watch's while it tells
  grpc::CallbackServerContext* context_;
  v1::ReduceResponse response_;
  grpc::ByteBuffer* response_bytes_;
  std::mutex mu_;
  StreamFlow flow_;  // guarded by mu_
  // A buffer belongs to whoever the flow's last step gave it to (a read in flight, the backend,
  // or OnReadDone under mu_), so they are touched without the lock outside those hands.
  ReceivedMessage<v1::ReduceChunk> chunks_[2];
  runtime::PayloadPieces payloads_[2];
  bool spec_seen_ = false;  // read and written only in OnReadDone, under mu_
};

}  // namespace gpureduce::server
