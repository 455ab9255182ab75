#include "server/reduce_unary_reactor.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/auth/authorization.h"
#include "server/shared_memory/shared_memory_rpcs.h"
#include "wire/dtype_mapping.h"

namespace gpureduce::server {

ReduceUnaryReactor::ReduceUnaryReactor(ServiceState& state, grpc::CallbackServerContext* context)
    : call_(state, Method::kReduce, context->peer(), MetadataBytes(context->client_metadata())),
      context_(context),
      idle_watch_(state.idle_watch) {
  // A call its client has already cancelled (rapid reset) costs nothing more: no admission,
  // no read, no log line.
  if (context->IsCancelled()) {
    call_.CancelledByClient();
    LeaveWaiting(Phase::kEnding);
    Conclude(absl::CancelledError("the call was cancelled before the server saw it"));
    return;
  }
  absl::Status admitted = Authorize(state.tokens, *context);
  if (admitted.ok()) admitted = call_.Admit();
  if (!admitted.ok()) {
    LeaveWaiting(Phase::kEnding);
    Conclude(std::move(admitted));
    return;
  }
  idle_watch_.Add(this);
  WaitingForMessage();  // before StartRead: the read may complete at once on another thread
  call_.ReadStarted();
  StartRead(request_.buffer());
}

bool ReduceUnaryReactor::LeaveWaiting(Phase next) {
  std::lock_guard<std::mutex> lock(mu_);
  if (phase_ != Phase::kWaiting) return false;
  phase_ = next;
  return true;
}

void ReduceUnaryReactor::OnReadDone(bool ok) {
  MessageArrived();
  if (!LeaveWaiting(Phase::kWorking)) return;  // the idle watch or a cancel ended the call
  if (!ok) {
    if (context_->IsCancelled()) {
      call_.CancelledByClient();
      Conclude(absl::CancelledError("the call was cancelled or its deadline passed"));
    } else {
      Conclude(absl::InvalidArgumentError(
          "the call ended without a request message; send one ReduceRequest"));
    }
    return;
  }
  call_.Received(request_.buffer()->Length());
  call_.RestartClock();
  if (absl::Status started = Start(); !started.ok()) Conclude(std::move(started));
}

void ReduceUnaryReactor::OnCancel() {
  call_.CancelledByClient();
  call_.Cancel();  // a request waiting for backend resources gives up
  // A call still waiting for its message has nothing in the backend to wait for.
  if (LeaveWaiting(Phase::kEnding)) {
    Conclude(absl::CancelledError("the call was cancelled or its deadline passed"));
  }
}

void ReduceUnaryReactor::OnDone() {
  idle_watch_.Remove(this);
  Unref();
}

void ReduceUnaryReactor::Unref() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

void ReduceUnaryReactor::OnIdle(absl::Duration limit, int64_t since, bool full) {
  if (!StillWaitingSince(since) || !LeaveWaiting(Phase::kEnding)) return;
  Conclude(absl::CancelledError(absl::StrCat(
      "the request message did not arrive in full within ", absl::FormatDuration(limit),
      full ? " while the server was full (the server's --stream-idle-timeout-when-full)"
           : " (the server's --stream-idle-timeout)",
      "; send it faster, or stream it in chunks")));
}

absl::Status ReduceUnaryReactor::Start() {
  if (absl::Status parsed = request_.Parse(); !parsed.ok()) return parsed;
  const v1::ReduceRequest& request = request_.message();
  if (!request.has_spec()) {
    return absl::InvalidArgumentError(
        "the request has no spec: set spec.op (and optionally "
        "spec.kernel, spec.block_size, spec.expected_count)");
  }
  if (request.payload_case() == v1::ReduceRequest::kSharedMemory) return StartShared(request);
  const uint64_t bytes = request_.data().bytes() + uint64_t(request.values_size()) * sizeof(float);
  if (absl::Status opened = call_.Open(request.spec(), bytes); !opened.ok()) return opened;
  absl::StatusOr<runtime::PayloadPieces> payload =
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
  absl::StatusOr<DType> dtype = wire::DTypeFromProto(request.spec().dtype());
  if (!dtype.ok()) return dtype.status();
  absl::StatusOr<std::shared_ptr<const Region>> region =
      ResolveSharedMemoryRef(call_.state().regions, call_.peer(), ref, *dtype);
  if (!region.ok()) return region.status();
  const uint64_t elements = ref.byte_size() / DTypeSize(*dtype);
  const bool on_gpu = (*region)->info().kind == RegionInfo::Kind::kCuda;
  const int device = on_gpu ? (*region)->info().device_id : -1;
  if (absl::Status opened = call_.Open(request.spec(), ref.byte_size(), device, !on_gpu);
      !opened.ok()) {
    return opened;
  }
  if (absl::Status apart = call_.CheckOutputApart(**region, ref); !apart.ok()) return apart;
  if (absl::Status counted = call_.CountShared(elements); !counted.ok()) return counted;
  if (elements == 0) {
    Conclude(absl::OkStatus());
    return absl::OkStatus();
  }
  region_.emplace(std::move(*region));
  call_.ConsumeShared((*region_)->Source(ref.offset(), ref.byte_size(), DTypeSize(*dtype)),
                      [this](absl::Status status) { Conclude(std::move(status)); });
  return absl::OkStatus();
}

void ReduceUnaryReactor::Conclude(absl::Status status) {
  call_.Complete(std::move(status), &response_, [this](grpc::Status result) {
    if (result.ok()) result = SerializeResponse(response_, &response_bytes_);
    if (result.ok()) {
      StartWriteAndFinish(&response_bytes_, grpc::WriteOptions(), grpc::Status::OK);
    } else {
      Finish(std::move(result));
    }
  });
}

}  // namespace gpureduce::server
