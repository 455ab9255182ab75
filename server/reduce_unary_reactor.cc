#include "server/reduce_unary_reactor.h"

#include <utility>

#include "server/auth/authorization.h"

namespace gpureduce::server {

ReduceUnaryReactor::ReduceUnaryReactor(ServiceState& state, grpc::CallbackServerContext* context,
                                       const v1::ReduceRequest* request,
                                       v1::ReduceResponse* response)
    : call_(state, Method::kReduce, context->peer()), response_(response) {
  absl::Status started = Authorize(state.tokens, *context);
  if (started.ok()) started = Start(*request);
  if (!started.ok()) {
    Conclude(std::move(started));
  }
}

absl::Status ReduceUnaryReactor::Start(const v1::ReduceRequest& request) {
  if (absl::Status admitted = call_.Admit(); !admitted.ok()) return admitted;
  if (!request.has_spec()) {
    return absl::InvalidArgumentError(
        "the request has no spec: set spec.op (and optionally "
        "spec.kernel, spec.block_size, spec.expected_count)");
  }
  const uint64_t elements = request.data().size() / sizeof(float) + request.values_size();
  if (absl::Status opened = call_.Open(request.spec(), elements); !opened.ok()) return opened;
  absl::StatusOr<std::span<const float>> payload =
      call_.Payload(request, call_.limits().max_request_bytes,
                    "send arrays this large with ReduceStream (the CLI streams automatically)", 0);
  if (!payload.ok()) return payload.status();
  if (payload->empty()) {
    Conclude(absl::OkStatus());
    return absl::OkStatus();
  }
  call_.Consume(*payload, [this](absl::Status status) { Conclude(std::move(status)); });
  return absl::OkStatus();
}

void ReduceUnaryReactor::Conclude(absl::Status status) {
  call_.Complete(std::move(status), response_,
                 [this](grpc::Status result) { Finish(std::move(result)); });
}

}  // namespace gpureduce::server
