#pragma once

// ReduceStream: the spec in the first chunk, data in any chunk. Two message buffers: while the
// backend reduces one chunk, gRPC receives the next into the other; a third message is not read
// until a buffer is free. That back-pressure bounds a stream's memory to two messages.

#include <mutex>

#include "absl/status/status.h"
#include "gpureduce/v1/reduce.grpc.pb.h"
#include "grpcpp/support/server_callback.h"
#include "server/reduce_call.h"
#include "server/service_state.h"

namespace gpureduce::server {

class ReduceStreamReactor final : public grpc::ServerReadReactor<v1::ReduceChunk> {
 public:
  ReduceStreamReactor(ServiceState& state, grpc::CallbackServerContext* context,
                      v1::ReduceResponse* response);

  void OnReadDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override { delete this; }

 private:
  // What to do once mu_ is released: gRPC and the backend may call back into this reactor from
  // another thread, so neither is called with the lock held.
  struct Next {
    int compute = -1;  // buffer to hand to the backend
    int read = -1;     // buffer to read the next message into
    bool finish = false;
    absl::Status status;  // with `finish`
  };

  absl::Status AcceptChunk(int buffer);
  Next ScheduleLocked(int received);  // a chunk in `received` (or -1) is ready for compute
  Next FailLocked(absl::Status status);
  Next FinishIfIdleLocked();
  void Run(Next next);
  void OnComputeDone(absl::Status status);
  // Ends the RPC once the backend has finished with the request.
  void Conclude(absl::Status status);

  ReduceCall call_;
  grpc::CallbackServerContext* context_;
  v1::ReduceResponse* response_;
  std::mutex mu_;
  v1::ReduceChunk chunks_[2];
  std::span<const float> payloads_[2];
  bool spec_seen_ = false;
  bool computing_ = false;
  int starting_reads_ = 0;  // reads decided on whose StartRead has not returned yet
  int waiting_ = -1;         // a received chunk waiting for the backend
  int read_buffer_ = 0;      // where the read in flight lands
  bool reads_done_ = false;  // the client half-closed, or the call broke
  bool cancelled_ = false;
  bool finished_ = false;
  absl::Status error_;
};

}  // namespace gpureduce::server
