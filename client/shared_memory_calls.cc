// ReducerClient's shared-memory calls (docs/shared-memory.md): registering, listing and
// unregistering regions, and reducing by reference to one.

#include <string>
#include <vector>

#include "client/reducer_client.h"
#include "grpcpp/client_context.h"

namespace gpureduce::client {
namespace {

absl::StatusOr<std::vector<std::string>> Unregister(
    v1::Reducer::Stub& stub, grpc::ClientContext& context,
    const v1::UnregisterSharedMemoryRequest& request) {
  v1::UnregisterSharedMemoryResponse response;
  grpc::Status status = stub.UnregisterSharedMemory(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return std::vector<std::string>(response.names().begin(), response.names().end());
}

}  // namespace

absl::StatusOr<v1::SharedMemoryRegion> ReducerClient::RegisterSystemSharedMemory(
    const std::string& name, const std::string& key, uint64_t offset, uint64_t byte_size,
    const CallOptions& options, bool unlink_key, bool writable) {
  v1::RegisterSystemSharedMemoryRequest request;
  request.set_name(name);
  request.set_key(key);
  request.set_offset(offset);
  request.set_byte_size(byte_size);
  request.set_unlink_key(unlink_key);
  request.set_writable(writable);
  grpc::ClientContext context;
  Prepare(options, &context);
  v1::RegisterSharedMemoryResponse response;
  grpc::Status status = stub_->RegisterSystemSharedMemory(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return std::move(*response.mutable_region());
}

absl::StatusOr<v1::SharedMemoryRegion> ReducerClient::RegisterCudaSharedMemory(
    const std::string& name, const std::string& raw_handle, int32_t device_id, uint64_t offset,
    uint64_t byte_size, const CallOptions& options) {
  v1::RegisterCudaSharedMemoryRequest request;
  request.set_name(name);
  request.set_raw_handle(raw_handle);
  request.set_device_id(device_id);
  request.set_offset(offset);
  request.set_byte_size(byte_size);
  grpc::ClientContext context;
  Prepare(options, &context);
  v1::RegisterSharedMemoryResponse response;
  grpc::Status status = stub_->RegisterCudaSharedMemory(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return std::move(*response.mutable_region());
}

absl::StatusOr<v1::ListSharedMemoryResponse> ReducerClient::ListSharedMemory(
    const CallOptions& options) {
  grpc::ClientContext context;
  Prepare(options, &context);
  v1::ListSharedMemoryResponse response;
  grpc::Status status = stub_->ListSharedMemory(&context, v1::ListSharedMemoryRequest(), &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response;
}

absl::StatusOr<std::vector<std::string>> ReducerClient::UnregisterSharedMemory(
    const std::string& name, const CallOptions& options) {
  v1::UnregisterSharedMemoryRequest request;
  request.set_name(name);
  grpc::ClientContext context;
  Prepare(options, &context);
  return Unregister(*stub_, context, request);
}

absl::StatusOr<std::vector<std::string>> ReducerClient::UnregisterAllSharedMemory(
    const CallOptions& options) {
  v1::UnregisterSharedMemoryRequest request;
  request.set_all(true);
  grpc::ClientContext context;
  Prepare(options, &context);
  return Unregister(*stub_, context, request);
}

absl::StatusOr<v1::ReduceResponse> ReducerClient::ReduceShared(const v1::ReduceSpec& spec,
                                                               const std::string& region,
                                                               uint64_t offset, uint64_t byte_size,
                                                               const CallOptions& options) {
  v1::ReduceRequest request;
  *request.mutable_spec() = spec;
  v1::SharedMemoryRef* ref = request.mutable_shared_memory();
  ref->set_region(region);
  ref->set_offset(offset);
  ref->set_byte_size(byte_size);
  return SendReduce(request, options);
}

}  // namespace gpureduce::client
