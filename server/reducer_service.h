#pragma once

// gpureduce.v1.Reducer on gRPC's callback API. Each Reduce call gets its own reactor; the
// service itself holds no per-call state. Reduce and ReduceStream are registered raw: their
// messages arrive as gRPC's buffers and their payloads are read where they were received
// (received_message.h); the other methods are typed. Reduce is also registered as a stream of
// one message each way: on the wire it is the same unary call, but gRPC then hands the call to
// the server before reading its message, so admission comes first (reduce_unary_reactor.h),
// through a handler that keeps the unary call's cost (admitted_unary_handler.h).

#include "gpureduce/v1/reduce.grpc.pb.h"
#include "server/service_state.h"

namespace gpureduce::server {

using ReducerServiceBase =
    v1::Reducer::WithRawCallbackMethod_ReduceStream<v1::Reducer::CallbackService>;

class ReducerService final : public ReducerServiceBase {
 public:
  explicit ReducerService(ServiceState& state);

  grpc::ServerReadReactor<grpc::ByteBuffer>* ReduceStream(grpc::CallbackServerContext* context,
                                                          grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* ListKernels(grpc::CallbackServerContext* context,
                                        const v1::ListKernelsRequest* request,
                                        v1::ListKernelsResponse* response) override;
  grpc::ServerUnaryReactor* GetServerInfo(grpc::CallbackServerContext* context,
                                          const v1::GetServerInfoRequest* request,
                                          v1::ServerInfo* response) override;
  grpc::ServerUnaryReactor* RegisterSystemSharedMemory(
      grpc::CallbackServerContext* context, const v1::RegisterSystemSharedMemoryRequest* request,
      v1::RegisterSharedMemoryResponse* response) override;
  grpc::ServerUnaryReactor* RegisterCudaSharedMemory(
      grpc::CallbackServerContext* context, const v1::RegisterCudaSharedMemoryRequest* request,
      v1::RegisterSharedMemoryResponse* response) override;
  grpc::ServerUnaryReactor* ListSharedMemory(grpc::CallbackServerContext* context,
                                             const v1::ListSharedMemoryRequest* request,
                                             v1::ListSharedMemoryResponse* response) override;
  grpc::ServerUnaryReactor* UnregisterSharedMemory(
      grpc::CallbackServerContext* context, const v1::UnregisterSharedMemoryRequest* request,
      v1::UnregisterSharedMemoryResponse* response) override;

 private:
  // Answers at once with `handle`'s status, once the caller is authorized.
  template <typename Handler>
  grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context, Handler handle);

  ServiceState& state_;
};

}  // namespace gpureduce::server
