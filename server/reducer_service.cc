#include "server/reducer_service.h"

#include <string>

#include "gpureduce/version.h"
#include "kernels/work_bound.h"
#include "server/admitted_unary_handler.h"
#include "server/auth/authorization.h"
#include "server/grpc_status.h"
#include "server/reduce_stream_reactor.h"
#include "server/reduce_unary_reactor.h"
#include "server/shared_memory/shared_memory_rpcs.h"
#include "wire/op_mapping.h"

namespace gpureduce::server {
namespace {

void ToProto(const kernels::KernelInfo& kernel, v1::KernelInfo* out) {
  out->set_name(kernel.name);
  out->set_description(kernel.description);
  out->set_lineage(kernel.lineage);
  out->set_backend(std::string(kernels::BackendName(kernel.backend)));
  for (Op op : kernel.ops) out->add_ops(wire::ToProto(op));
  out->set_deterministic(kernel.deterministic);
  out->set_default_block_size(kernel.default_block_size);
  out->set_min_block_size(kernel.min_block_size);
  out->set_max_block_size(kernel.max_block_size);
  for (Op op : kernel.ops) {
    const kernels::WorkBound bound = kernels::GetWorkBound(kernel.id, op);
    if (bound.max_elements == 0) continue;
    v1::WorkBound* listed = out->add_bounds();
    listed->set_op(wire::ToProto(op));
    listed->set_max_elements(bound.max_elements);
    listed->set_elements_per_launch(bound.elements_per_launch);
    listed->set_ns_per_element(bound.ns_per_element);
    listed->set_why(bound.why);
  }
}

// Reduce's place in the generated service (the order of reduce.proto's methods).
constexpr int kReduceMethodIndex = 0;

}  // namespace

ReducerService::ReducerService(ServiceState& state) : state_(state) {
  // gRPC reads a unary call's message before it hands the call over; a stream's only when the
  // server asks. Registered as a stream (gRPC's own "streamed unary"), a Reduce is admitted or
  // refused before any of its message is read; clients see the same unary call.
  MarkMethodStreamed(kReduceMethodIndex,
                     new AdmittedUnaryHandler([this](grpc::CallbackServerContext* context) {
                       return new ReduceUnaryReactor(state_, context);
                     }));
}

grpc::ServerReadReactor<grpc::ByteBuffer>* ReducerService::ReduceStream(
    grpc::CallbackServerContext* context, grpc::ByteBuffer* response) {
  return new ReduceStreamReactor(state_, context, response);
}

grpc::ServerUnaryReactor* ReducerService::ListKernels(grpc::CallbackServerContext* context,
                                                      const v1::ListKernelsRequest*,
                                                      v1::ListKernelsResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (absl::Status authorized = Authorize(state_.tokens, *context); !authorized.ok()) {
    reactor->Finish(ToGrpcStatus(authorized));
    return reactor;
  }
  for (const kernels::KernelInfo* kernel : state_.backend.Kernels()) {
    ToProto(*kernel, response->add_kernels());
  }
  response->set_default_kernel(kernels::GetKernel(state_.backend.default_kernel()).name);
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* ReducerService::GetServerInfo(grpc::CallbackServerContext* context,
                                                        const v1::GetServerInfoRequest*,
                                                        v1::ServerInfo* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (absl::Status authorized = Authorize(state_.tokens, *context); !authorized.ok()) {
    reactor->Finish(ToGrpcStatus(authorized));
    return reactor;
  }
  response->set_version(std::string(kVersion) + "+" + kGitCommit);
  response->set_backend(std::string(kernels::BackendName(state_.backend.kind())));
  const std::vector<runtime::DeviceUsage> usage = state_.backend.Usage();
  for (const runtime::DeviceDescription& device : state_.backend.devices()) {
    v1::DeviceInfo* out = response->add_devices();
    for (const runtime::DeviceUsage& now : usage) {
      if (now.device != device.index) continue;
      out->set_requests(now.requests);
      out->set_outstanding_bytes(now.outstanding_bytes);
      out->set_lost(now.lost);
      if (now.lost) response->set_degraded(true);
    }
    out->set_index(device.index);
    out->set_name(device.name);
    out->set_memory_bytes(device.memory_bytes);
    out->set_multiprocessors(device.multiprocessors);
    out->set_peak_bandwidth_gbps(device.peak_bandwidth_gbps);
    out->set_l2_bytes(device.l2_bytes);
  }
  response->set_max_request_bytes(state_.limits.max_request_bytes);
  response->set_max_chunk_bytes(state_.limits.max_chunk_bytes);
  response->set_max_result_bytes(state_.limits.max_result_bytes);
  response->set_unix_socket(state_.unix_socket);
  response->set_instance_id(state_.instance_id);
  response->set_max_concurrent_requests(state_.limits.max_concurrent_requests);
  response->set_worker_threads(state_.backend.workers());
  response->set_serving(state_.ready.load(std::memory_order_acquire));
  response->set_shared_memory(state_.regions.limits().enabled);
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

template <typename Handler>
grpc::ServerUnaryReactor* ReducerService::Answer(grpc::CallbackServerContext* context,
                                                 Handler handle) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::Status status = Authorize(state_.tokens, *context);
  if (status.ok()) status = handle();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

// Registration maps and pins on this gRPC thread: seconds for gigabytes, rare, and bounded by
// --shared-memory-max-regions.
grpc::ServerUnaryReactor* ReducerService::RegisterSystemSharedMemory(
    grpc::CallbackServerContext* context, const v1::RegisterSystemSharedMemoryRequest* request,
    v1::RegisterSharedMemoryResponse* response) {
  return Answer(context, [&] {
    return server::RegisterSystemSharedMemory(state_.regions, state_.backend, context->peer(),
                                              *request, response);
  });
}

grpc::ServerUnaryReactor* ReducerService::RegisterCudaSharedMemory(
    grpc::CallbackServerContext* context, const v1::RegisterCudaSharedMemoryRequest* request,
    v1::RegisterSharedMemoryResponse* response) {
  return Answer(context, [&] {
    return server::RegisterCudaSharedMemory(state_.regions, state_.backend, context->peer(),
                                            *request, response);
  });
}

grpc::ServerUnaryReactor* ReducerService::ListSharedMemory(grpc::CallbackServerContext* context,
                                                           const v1::ListSharedMemoryRequest*,
                                                           v1::ListSharedMemoryResponse* response) {
  return Answer(
      context, [&] { return server::ListSharedMemory(state_.regions, context->peer(), response); });
}

grpc::ServerUnaryReactor* ReducerService::UnregisterSharedMemory(
    grpc::CallbackServerContext* context, const v1::UnregisterSharedMemoryRequest* request,
    v1::UnregisterSharedMemoryResponse* response) {
  return Answer(context, [&] {
    return server::UnregisterSharedMemory(state_.regions, context->peer(), *request, response);
  });
}

}  // namespace gpureduce::server
