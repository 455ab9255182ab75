#include "server/reduce_call.h"

#include <span>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/fmt_absl.h"
#include "common/reduction/op_name.h"
#include "common/reduction/op_result.h"
#include "kernels/work_bound.h"
#include "server/array_spec.h"
#include "server/grpc_status.h"
#include "server/request_spec.h"
#include "spdlog/spdlog.h"
#include "wire/dtype_mapping.h"
#include "wire/op_mapping.h"
#include "wire/result_mapping.h"

namespace gpureduce::server {
namespace {

double Micros(std::chrono::nanoseconds duration) { return duration.count() / 1e3; }

// What an admitted call's message may bring beyond the transport's limit on it: the wire's
// framing.
constexpr int64_t kMessageOverheadBytes = 64 << 10;

}  // namespace

ReduceCall::ReduceCall(ServiceState& state, Method method, std::string peer,
                       uint64_t metadata_bytes)
    : state_(state),
      method_(method),
      peer_(std::move(peer)),
      start_(std::chrono::steady_clock::now()) {
  state_.metrics.CallStarted(method_);
  if (state_.gate == nullptr) return;
  if (std::shared_ptr<Connection> connection = state_.gate->Find(peer_); connection != nullptr) {
    account_.emplace(*state_.gate, std::move(connection), metadata_bytes);
  }
}

ReduceCall::~ReduceCall() { Release(); }

void ReduceCall::Release() {
  slot_.reset();
  if (account_.has_value() && allowed_bytes_ != 0) {
    // A message still arriving is dropped by gRPC: what it held so far was never delivered.
    if (reading_.exchange(false, std::memory_order_relaxed)) {
      account_->connection().CreditDropped(allowed_bytes_, state_.limits.TransportLimit());
    }
    // Released after the credits: the memory guard that sees the allowance gone sees them too.
    account_->connection().allowed_bytes.fetch_sub(allowed_bytes_, std::memory_order_release);
    allowed_bytes_ = 0;
  }
}

absl::Status ReduceCall::Admit() {
  if (!state_.ready.load(std::memory_order_acquire)) {
    state_.metrics.Refused(Refusal::kNotReady);
    return absl::UnavailableError(
        "the server is starting: its backend self-check has not passed yet; retry shortly");
  }
  Admission::Bound reached;
  absl::StatusOr<Admission::Slot> slot =
      state_.admission.TryAcquire(Admission::ClientOf(peer_), &reached);
  if (!slot.ok()) {
    if (reached == Admission::Bound::kServer) state_.idle_watch.ServerFull();
    state_.metrics.Refused(reached == Admission::Bound::kServer ? Refusal::kServerFull
                                                                : Refusal::kClientFull);
    return slot.status();
  }
  slot_ = std::move(*slot);
  // An admitted call's message may arrive now: its connection may hold as much of it as gRPC
  // receives before refusing it (a message over the payload limit but within that is refused
  // with a precise message; beyond it, the memory guard evicts the connection).
  if (account_.has_value()) {
    allowed_bytes_ = kMessageOverheadBytes + static_cast<int64_t>(state_.limits.TransportLimit());
    account_->connection().allowed_bytes.fetch_add(allowed_bytes_, std::memory_order_relaxed);
  }
  return absl::OkStatus();
}

absl::Status ReduceCall::Open(const v1::ReduceSpec& spec, uint64_t payload_bytes, int device,
                              bool host_region) {
  absl::StatusOr<runtime::RequestSpec> resolved = ResolveSpec(spec, state_.backend);
  if (!resolved.ok()) return resolved.status();
  if (absl::Status status = ResolveLayout(spec, state_.limits.max_result_bytes, &*resolved);
      !status.ok()) {
    return status;
  }
  if (spec.has_output()) {
    if (resolved->layout == nullptr) {
      return absl::InvalidArgumentError(
          "spec.output takes an array request's results: set spec.shape or spec.segments too "
          "(a full reduction's answer is in the response)");
    }
    absl::StatusOr<std::unique_ptr<ArrayOutput>> output = ArrayOutput::Resolve(
        state_.regions, peer_, spec.output(), *resolved->layout, resolved->ops(), resolved->dtype);
    if (!output.ok()) return output.status();
    output_ = std::move(*output);
  }
  const uint64_t size_hint = payload_bytes / DTypeSize(resolved->dtype);
  const uint64_t declared =
      resolved->layout != nullptr ? resolved->layout->count() : resolved->expected_count;
  resolved->size_hint = size_hint != 0 ? size_hint : declared;
  resolved->one_message = size_hint != 0;  // unary: the payload's size is known
  resolved->data_in_host_region = host_region;
  if (device >= 0) {  // the data is on that GPU
    if (resolved->device >= 0 && resolved->device != device) {
      return absl::FailedPreconditionError(absl::StrCat("the spec pins device ", resolved->device,
                                                        ", but the region's memory is on GPU ",
                                                        device));
    }
    resolved->device = device;
    resolved->data_on_device = true;
  }
  absl::StatusOr<std::unique_ptr<runtime::ReduceSession>> session = state_.backend.Open(*resolved);
  if (!session.ok()) return session.status();
  spec_ = *resolved;
  carry_.set_element_bytes(DTypeSize(spec_->dtype));
  max_elements_ = kernels::GetWorkBound(spec_->kernel, spec_->op).max_elements;
  std::lock_guard<std::mutex> lock(session_mu_);
  session_ = std::move(*session);
  // The call was cancelled while it opened (its message had just arrived): what it starts next
  // gives up at once instead of waiting for backend resources.
  if (cancelled_) session_->Cancel();
  return absl::OkStatus();
}

absl::Status ReduceCall::Count(size_t elements) {
  elements_ += elements;
  ++chunks_;
  if (spec_->expected_count != 0 && elements_ > spec_->expected_count) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the request carries more elements than expected_count=", spec_->expected_count, " (",
        elements_, " so far); send exactly expected_count elements or leave it 0"));
  }
  if (spec_->layout != nullptr && elements_ > spec_->layout->count()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the request carries more elements than its ", spec_->layout->Describe(),
                     " holds (", spec_->layout->count(), "; ", elements_, " so far)"));
  }
  // A unary payload, or a stream that declared no size, meets the kernel's bound here, before its
  // data runs (a declared expected_count met it in ResolveSpec). The bound is read once, in Open.
  if (max_elements_ != 0 && elements_ > max_elements_) {
    return kernels::CheckWorkBound(spec_->kernel, spec_->op, elements_);
  }
  return absl::OkStatus();
}

absl::StatusOr<runtime::PayloadPieces> ReduceCall::Payload(
    const runtime::PayloadPieces& data, const google::protobuf::RepeatedField<float>& values,
    uint64_t max_bytes, const char* too_big, int stream_buffer) {
  const bool stream = stream_buffer >= 0;
  absl::StatusOr<runtime::PayloadPieces> payload =
      ExtractPayload(data, values, max_bytes, too_big, spec_->dtype, /*whole_elements=*/!stream);
  if (!payload.ok()) return payload.status();
  if (stream && !values.empty() && carry_.held() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("a values chunk follows a data chunk that ended inside an element (",
                     carry_.held(), " bytes of it wait); complete the element in data first"));
  }
  if (stream && values.empty()) payload = carry_.Take(*payload, stream_buffer);
  if (absl::Status status = Count(payload->count()); !status.ok()) return status;
  return payload;
}

void ReduceCall::Received(uint64_t bytes) {
  reading_.store(false, std::memory_order_relaxed);
  // The gRPC length prefix and DATA frame headers, and TLS records, generously.
  if (account_.has_value()) {
    account_->connection().credited_bytes.fetch_add(bytes + bytes / 64 + 64,
                                                    std::memory_order_relaxed);
    account_->MessageReceived();  // its unread allowance goes after the credit (byte_account.h)
  }
}

void ReduceCall::CancelledByClient() {
  cancelled_by_client_.store(true, std::memory_order_relaxed);
  if (account_.has_value()) account_->Cancelled();
}

void ReduceCall::Consume(runtime::PayloadPieces data, runtime::ConsumeDone done) {
  session_->ConsumePieces(std::move(data), std::move(done));
}

void ReduceCall::ConsumeShared(const runtime::SharedSource& source, runtime::ConsumeDone done) {
  session_->ConsumeShared(source, std::move(done));
}

void ReduceCall::Complete(absl::Status status, v1::ReduceResponse* response,
                          absl::AnyInvocable<void(grpc::Status) &&> finish) {
  if (session_ == nullptr) {
    std::move(finish)(Conclude(
        std::move(status), [] { return absl::InternalError("no session"); }, response));
    return;
  }
  if (spec_->layout != nullptr) {
    session_->FinishArrays([this, status = std::move(status), response, finish = std::move(finish)](
                               absl::StatusOr<std::vector<runtime::ArrayResult>> arrays) mutable {
      std::move(finish)(Conclude(
          std::move(status),
          [&]() -> absl::Status {
            if (!arrays.ok()) return arrays.status();
            return FillArrays(*arrays, response);
          },
          response));
    });
    return;
  }
  session_->Finish([this, status = std::move(status), response,
                    finish = std::move(finish)](absl::StatusOr<gpureduce::Stats> stats) mutable {
    std::move(finish)(Conclude(
        std::move(status),
        [&]() -> absl::Status {
          if (!stats.ok()) return stats.status();
          return FillResults(*stats, response);
        },
        response));
  });
}

void ReduceCall::Cancel() {
  std::lock_guard<std::mutex> lock(session_mu_);
  cancelled_ = true;
  if (session_ != nullptr) session_->Cancel();
}

grpc::Status ReduceCall::Conclude(absl::Status status,
                                  absl::FunctionRef<absl::Status()> fill_results,
                                  v1::ReduceResponse* response) {
  if (status.ok() && !spec_.has_value()) {
    status = absl::InvalidArgumentError("the request ended before it carried a spec");
  }
  if (status.ok() && spec_->expected_count != 0 && elements_ != spec_->expected_count) {
    status = absl::InvalidArgumentError(absl::StrCat(
        "the request ended after ", elements_, " elements but declared expected_count=",
        spec_->expected_count, "; no result is given for a partial array"));
  }
  if (status.ok() && carry_.held() != 0) {
    status = absl::InvalidArgumentError(
        absl::StrCat("the stream ended inside an element: its last ", carry_.held(),
                     " bytes are not a whole ", DTypeName(spec_->dtype), " (",
                     DTypeSize(spec_->dtype), " bytes); no result is given for a partial array"));
  }
  if (status.ok() && spec_->layout != nullptr && elements_ != spec_->layout->count()) {
    status = absl::InvalidArgumentError(absl::StrCat(
        "the request ended after ", elements_, " elements but its ", spec_->layout->Describe(),
        " holds ", spec_->layout->count(), "; no result is given for a partial array"));
  }
  if (status.ok()) status = fill_results();
  if (status.ok()) FillResponse(response);
  if (status.ok()) {
    spdlog::debug("{} op={} kernel={} count={} chunks={} server_us={:.1f} peer={}",
                  MethodName(method_), gpureduce::OpName(spec_->op),
                  kernels::GetKernel(session_->kernel()).name, elements_, chunks_,
                  response->timing().server_us(), peer_);
  } else {
    LogFailure(status);
  }
  Release();
  CallRecord record;
  record.method = method_;
  if (spec_.has_value()) {
    record.op = spec_->op;
    record.kernel = session_ != nullptr ? session_->kernel() : spec_->kernel;
  }
  record.code = status.code();
  record.server = std::chrono::steady_clock::now() - start_;
  if (status.ok()) {
    record.timing = session_->timing();
    record.bytes = elements_ * DTypeSize(spec_->dtype);
  }
  state_.metrics.CallFinished(record);
  return ToGrpcStatus(status);
}

void ReduceCall::LogFailure(const absl::Status& status) const {
  auto line = [&] {
    return fmt::format("{} failed: {}: {} (peer {}, {} elements in {} chunks)", MethodName(method_),
                       absl::StatusCodeToString(status.code()), status.message(), peer_, elements_,
                       chunks_);
  };
  // A call its client cancelled is the client's business (rapid reset sends them by the
  // thousand): counted in the metrics, logged only at debug level.
  if (status.code() == absl::StatusCode::kCancelled &&
      cancelled_by_client_.load(std::memory_order_relaxed)) {
    spdlog::debug("{}", line());
    return;
  }
  state_.failures.Warn(Admission::ClientOf(peer_), absl::StatusCodeToString(status.code()), line);
}

absl::Status ReduceCall::FillResults(const gpureduce::Stats& stats,
                                     v1::ReduceResponse* response) const {
  const std::span<const Op> ops = spec_->ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    absl::StatusOr<OpResult> result = FinalizeOp(ops[i], spec_->dtype, spec_->ddof, stats);
    if (!result.ok()) {
      if (ops.size() == 1) return result.status();
      return absl::Status(result.status().code(),
                          absl::StrCat("spec.ops[", i, "]: ", result.status().message()));
    }
    if (i == 0) {
      response->set_value(result->unrounded);
      response->set_index(result->index);
    }
    wire::ToProto(*result, response->add_results());
  }
  response->set_count(stats.count);
  response->set_dtype(wire::ToProto(spec_->dtype));
  return absl::OkStatus();
}

absl::Status ReduceCall::FillArrays(std::vector<runtime::ArrayResult>& arrays,
                                    v1::ReduceResponse* response) const {
  const ReduceLayout& layout = *spec_->layout;
  for (size_t i = 0; i < arrays.size(); ++i) {
    runtime::ArrayResult& array = arrays[i];
    v1::OpResult* result = response->add_results();
    if (array.only.has_value()) {  // one output: the scalar fields answer too
      wire::ToProto(*array.only, result);
      if (i == 0) {
        response->set_value(array.only->unrounded);
        response->set_index(array.only->index);
      }
    } else {
      result->set_op(wire::ToProto(array.op));
      result->set_dtype(wire::ToProto(array.dtype));
      result->set_index(-1);
      if (i == 0) response->set_index(-1);
    }
    for (uint64_t extent : layout.result_shape()) result->add_shape(extent);
    result->set_overflow_count(array.overflow_count);
    result->set_overflow(array.overflow_count != 0);
    if (output_ != nullptr) {
      absl::StatusOr<uint64_t> at = output_->Write(
          i, std::span(reinterpret_cast<const std::byte*>(array.data.data()), array.data.size()));
      if (!at.ok()) return at.status();
      result->set_output_offset(*at);
    } else {
      *result->mutable_data() = std::move(array.data);
    }
  }
  response->set_count(elements_);
  response->set_dtype(wire::ToProto(spec_->dtype));
  return absl::OkStatus();
}

void ReduceCall::FillResponse(v1::ReduceResponse* response) const {
  response->set_kernel(kernels::GetKernel(session_->kernel()).name);
  response->set_backend(std::string(kernels::BackendName(session_->backend())));
  response->set_device(session_->device_name());
  for (int device : session_->devices()) response->add_device_indices(device);

  const runtime::BackendTiming backend = session_->timing();
  const auto server = std::chrono::steady_clock::now() - start_;
  const uint64_t bytes = elements_ * DTypeSize(spec_->dtype);
  v1::Timing* timing = response->mutable_timing();
  timing->set_queue_us(Micros(backend.queue));
  timing->set_h2d_us(Micros(backend.h2d));
  timing->set_kernel_us(Micros(backend.kernel));
  timing->set_d2h_us(Micros(backend.d2h));
  timing->set_server_us(Micros(server));
  timing->set_bytes(bytes);
  timing->set_chunks(chunks_);
  // bytes per microsecond / 1e3 = GB/s
  if (backend.kernel.count() > 0) timing->set_kernel_gbps(bytes / Micros(backend.kernel) / 1e3);
  if (server.count() > 0) timing->set_server_gbps(bytes / Micros(server) / 1e3);
}

}  // namespace gpureduce::server
