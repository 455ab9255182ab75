#pragma once

// Reduce: the whole array in one message, up to the unary limit (larger arrays must stream), or
// a reference to it in a registered shared-memory region.

#include <memory>
#include <optional>

#include "gpureduce/v1/reduce.grpc.pb.h"
#include "grpcpp/support/server_callback.h"
#include "server/received_message.h"
#include "server/reduce_call.h"
#include "server/service_state.h"
#include "server/shared_memory/region.h"

namespace gpureduce::server {

class ReduceUnaryReactor final : public grpc::ServerUnaryReactor {
 public:
  // `request` and `response` are the raw call's (received_message.h says why raw).
  ReduceUnaryReactor(ServiceState& state, grpc::CallbackServerContext* context,
                     const grpc::ByteBuffer* request, grpc::ByteBuffer* response);

  // A cancelled call still finishes once the backend is done with the request's memory.
  void OnCancel() override { call_.Cancel(); }
  void OnDone() override { delete this; }
  // Both reactions above are short and never wait, so gRPC may run them on the thread that
  // completes the call instead of handing each to its executor: a thread wake-up per request
  // (a context switch per call, 40% more CPU per 1024-float request than the sink's measured
  // on the dev machine), which gRPC's own DefaultReactor avoids the same way.
  bool InternalInlineable() override { return true; }

 private:
  absl::Status Start();
  absl::Status StartShared(const v1::ReduceRequest& request);
  void Conclude(absl::Status status);

  ReduceCall call_;
  ReceivedMessage<v1::ReduceRequest> request_;
  v1::ReduceResponse response_;
  grpc::ByteBuffer* response_bytes_;
  // The region a shared-memory request reads: open, and counted in use, until the call is done.
  std::optional<Region::Use> region_;
};

}  // namespace gpureduce::server
