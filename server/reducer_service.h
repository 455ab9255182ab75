#pragma once

// gpureduce.v1.Reducer on gRPC's callback API. Each Reduce call gets its own reactor; the
// service itself holds no per-call state.

#include "gpureduce/v1/reduce.grpc.pb.h"
#include "server/service_state.h"

namespace gpureduce::server {

class ReducerService final : public v1::Reducer::CallbackService {
 public:
  explicit ReducerService(ServiceState& state) : state_(state) {}

  grpc::ServerUnaryReactor* Reduce(grpc::CallbackServerContext* context,
                                   const v1::ReduceRequest* request,
                                   v1::ReduceResponse* response) override;
  grpc::ServerReadReactor<v1::ReduceChunk>* ReduceStream(grpc::CallbackServerContext* context,
                                                         v1::ReduceResponse* response) override;
  grpc::ServerUnaryReactor* ListKernels(grpc::CallbackServerContext* context,
                                        const v1::ListKernelsRequest* request,
                                        v1::ListKernelsResponse* response) override;
  grpc::ServerUnaryReactor* GetServerInfo(grpc::CallbackServerContext* context,
                                          const v1::GetServerInfoRequest* request,
                                          v1::ServerInfo* response) override;

 private:
  ServiceState& state_;
};

}  // namespace gpureduce::server
