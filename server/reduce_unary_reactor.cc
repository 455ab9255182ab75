#include "server/reduce_unary_reactor.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/auth/authorization.h"
#include "server/shared_memory/shared_memory_rpcs.h"

namespace gpureduce::server {

ReduceUnaryReactor::ReduceUnaryReactor(ServiceState& state, grpc::CallbackServerContext* context,
                                       const grpc::ByteBuffer* request, grpc::ByteBuffer* response)
    : call_(state, Method::kReduce, context->peer()), response_bytes_(response) {
  *request_.buffer() = *request;  // a reference to the same slices, not a copy of the bytes
  absl::Status started = Authorize(state.tokens, *context);
  if (started.ok()) started = Start();
  if (!started.ok()) {
    Conclude(std::move(started));
  }
}

absl::Status ReduceUnaryReactor::Start() {
  if (absl::Status admitted = call_.Admit(); !admitted.ok()) return admitted;
  if (absl::Status parsed = request_.Parse(); !parsed.ok()) return parsed;
  const v1::ReduceRequest& request = request_.message();
  if (!request.has_spec()) {
    return absl::InvalidArgumentError(
        "the request has no spec: set spec.op (and optionally "
        "spec.kernel, spec.block_size, spec.expected_count)");
  }
  if (request.payload_case() == v1::ReduceRequest::kSharedMemory) return StartShared(request);
  const uint64_t elements = request_.data().count() + request.values_size();
  if (absl::Status opened = call_.Open(request.spec(), elements); !opened.ok()) return opened;
  absl::StatusOr<runtime::FloatPieces> payload =
      call_.Payload(request_.data(), request.values(), call_.limits().max_request_bytes,
                    "send arrays this large with ReduceStream (the CLI streams automatically)");
  if (!payload.ok()) return payload.status();
  if (payload->empty()) {
    Conclude(absl::OkStatus());
    return absl::OkStatus();
  }
  call_.Consume(*std::move(payload), [this](absl::Status status) { Conclude(std::move(status)); });
  return absl::OkStatus();
}

absl::Status ReduceUnaryReactor::StartShared(const v1::ReduceRequest& request) {
  if (!request.values().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("both payloads are set (shared_memory, and values: ", request.values_size(),
                     " floats); send the array in exactly one of them"));
  }
  const v1::SharedMemoryRef& ref = request.shared_memory();
  absl::StatusOr<std::shared_ptr<const Region>> region =
      ResolveSharedMemoryRef(call_.state().regions, call_.peer(), ref);
  if (!region.ok()) return region.status();
  const uint64_t elements = ref.byte_size() / sizeof(float);
  const int device =
      (*region)->info().kind == RegionInfo::Kind::kCuda ? (*region)->info().device_id : -1;
  if (absl::Status opened = call_.Open(request.spec(), elements, device); !opened.ok()) {
    return opened;
  }
  if (absl::Status counted = call_.CountShared(elements); !counted.ok()) return counted;
  if (elements == 0) {
    Conclude(absl::OkStatus());
    return absl::OkStatus();
  }
  region_.emplace(std::move(*region));
  call_.ConsumeShared((*region_)->Source(ref.offset(), ref.byte_size()),
                      [this](absl::Status status) { Conclude(std::move(status)); });
  return absl::OkStatus();
}

void ReduceUnaryReactor::Conclude(absl::Status status) {
  call_.Complete(std::move(status), &response_, [this](grpc::Status result) {
    if (result.ok()) result = SerializeResponse(response_, response_bytes_);
    Finish(std::move(result));
  });
}

}  // namespace gpureduce::server
