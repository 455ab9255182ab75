// The server's request path from raw bytes, without gRPC's transport: a ReduceRequest (a Reduce
// call) or a run of ReduceChunks (a ReduceStream call) read from the input as the server reads
// them (ReceivedMessage over slices, checked against protobuf), then what ReduceCall does with
// it: ResolveSpec, the CPU backend's session, ExtractPayload, Consume, Finish and Finalize. Every
// refusal must carry a code the README's error table documents for it, and every result must
// match the independent long-double reference (tests/support/reference.h) within the README's
// bound. Admission, deadlines and the reactors' flow are left to the unit and system tests.
//
// Input: byte 0 picks the call, bit 0 unary (0) or stream (1); bits 1-2 shift the `data` bytes
// 0-3 bytes off float alignment (and the bytes are cut in two pieces) so the CPU backend's copy
// out of received pieces runs too; bit 3 (unary) repeats the
// payload past two of the CPU kernel's 65536-element tasks before it is reduced, so the thread
// pool's tasks and their in-order combine run (a tie across tasks must still give the first
// occurrence). The rest is one serialized ReduceRequest, or ReduceChunks each preceded by its
// varint length (protobuf's delimited format); parsing stops at the first one that does not
// parse, as gRPC would.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/io/coded_stream.h"
#include "gpureduce/v1/reduce.pb.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/slice.h"
#include "kernels/reduce.h"
#include "runtime/backend.h"
#include "runtime/backend_factory.h"
#include "server/payload.h"
#include "server/received_message.h"
#include "server/request_spec.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/support/reference.h"
#include "tests/support/stand_in_backend.h"

namespace gpureduce::fuzzing {
namespace {

using absl::StatusCode;
using google::protobuf::RepeatedField;

// Small limits, so that inputs of a few KiB reach them.
constexpr uint64_t kMaxRequestBytes = 8192;
constexpr uint64_t kMaxChunkBytes = 1024;
constexpr int kMaxChunks = 256;
// README "Semantics": the default kernels accumulate in float64, within 1e-9 relative (for sums
// relative to sum(|x|)); MIN, MAX, ARGMIN and ARGMAX are exact.
constexpr double kRelativeTolerance = 1e-9;

runtime::Backend& CpuBackend() {
  static runtime::Backend* const backend = [] {
    runtime::BackendOptions options;
    options.kind = runtime::BackendChoice::kCpu;
    options.worker_threads = 2;
    absl::StatusOr<std::unique_ptr<runtime::Backend>> created = runtime::CreateBackend(options);
    if (!created.ok()) Fail(created.status().ToString());
    return created->release();  // lives for the whole run, as in the server
  }();
  return *backend;
}

// ResolveSpec: INVALID_ARGUMENT or FAILED_PRECONDITION only, and an accepted spec is what the
// wire asked for, on a kernel of this backend that runs the op.
absl::StatusOr<runtime::RequestSpec> Resolve(const v1::ReduceSpec& wire,
                                             const runtime::Backend& backend) {
  absl::StatusOr<runtime::RequestSpec> spec = server::ResolveSpec(wire, backend);
  CheckCode(spec.status(), {StatusCode::kInvalidArgument, StatusCode::kFailedPrecondition},
            "ResolveSpec");
  const int op = static_cast<int>(wire.op());
  if (op < v1::SUM || op > v1::ARGMAX) {
    GPUREDUCE_FUZZ_CHECK(spec.status().code() == StatusCode::kInvalidArgument,
                         spec.status().ToString());
  }
  if (!spec.ok()) return spec;
  const kernels::KernelInfo& kernel = kernels::GetKernel(spec->kernel);
  const bool auto_kernel = wire.kernel().empty() || wire.kernel() == kernels::kAutoKernel;
  GPUREDUCE_FUZZ_CHECK(static_cast<int>(spec->op) == op, op);
  GPUREDUCE_FUZZ_CHECK(kernel.backend == backend.kind(), kernel.name);
  GPUREDUCE_FUZZ_CHECK(
      spec->auto_kernel == auto_kernel && (auto_kernel || kernel.name == wire.kernel()),
      kernel.name);
  GPUREDUCE_FUZZ_CHECK(kernels::ValidateOp(kernel, spec->op).ok(), kernel.name);
  GPUREDUCE_FUZZ_CHECK(
      spec->block_size == wire.block_size() && spec->expected_count == wire.expected_count(), "");
  return spec;
}

// One message's payload, as ReduceCall::Payload takes it: `data` moved `offset` bytes off its
// alignment and cut in two pieces (a float may straddle the cut), as gRPC's slices hold it.
// Owns what the pieces point into; `floats` is what they hold.
struct Payload {
  std::string shifted;
  absl::StatusOr<runtime::PayloadPieces> pieces;
  std::vector<float> floats;
};

// ExtractPayload: INVALID_ARGUMENT for both fields set or a ragged byte count, RESOURCE_EXHAUSTED
// over the limit, and otherwise exactly the floats sent, bit for bit.
void Extract(absl::string_view data, const RepeatedField<float>& values, uint64_t max_bytes,
             size_t offset, Payload& out) {
  out.shifted.assign(offset, '\0');
  out.shifted.append(data.data(), data.size());
  const absl::string_view moved = absl::string_view(out.shifted).substr(offset);
  const size_t cut = moved.size() / 3 + offset;
  runtime::PayloadPieces pieces;
  pieces.Append(reinterpret_cast<const std::byte*>(moved.data()), std::min(cut, moved.size()));
  if (cut < moved.size()) {
    pieces.Append(reinterpret_cast<const std::byte*>(moved.data() + cut), moved.size() - cut);
  }
  out.pieces = server::ExtractPayload(pieces, values, max_bytes, "stream it");
  const absl::Status& status = out.pieces.status();
  CheckCode(status, {StatusCode::kInvalidArgument, StatusCode::kResourceExhausted},
            "ExtractPayload");
  const bool both = !data.empty() && !values.empty();
  const uint64_t bytes = data.empty() ? uint64_t(values.size()) * sizeof(float) : data.size();
  const bool too_big = bytes > max_bytes;
  const bool ragged = data.size() % sizeof(float) != 0;
  if (!status.ok()) {
    GPUREDUCE_FUZZ_CHECK((status.code() == StatusCode::kInvalidArgument && (both || ragged)) ||
                             (status.code() == StatusCode::kResourceExhausted && too_big),
                         status.ToString());
    return;
  }
  GPUREDUCE_FUZZ_CHECK(!both && !too_big && !ragged, "an invalid payload was accepted");
  out.floats.resize(out.pieces->count());
  if (!out.floats.empty()) out.pieces->CopyFloats(0, out.floats.size(), out.floats.data());
  const void* sent = data.empty() ? static_cast<const void*>(values.data()) : moved.data();
  GPUREDUCE_FUZZ_CHECK(out.floats.size() * sizeof(float) == bytes &&
                           (bytes == 0 || std::memcmp(out.floats.data(), sent, bytes) == 0),
                       "the payload's floats differ from the bytes sent");
}

void ConsumeNow(runtime::ReduceSession& session, runtime::PayloadPieces data) {
  std::promise<absl::Status> done;
  session.ConsumePieces(std::move(data),
                        [&done](absl::Status status) { done.set_value(std::move(status)); });
  const absl::Status status = done.get_future().get();
  CheckCode(status, {}, "ReduceSession::ConsumePieces");
}

absl::StatusOr<gpureduce::Partial> FinishNow(runtime::ReduceSession& session) {
  std::promise<absl::StatusOr<gpureduce::Partial>> done;
  session.Finish(
      [&done](absl::StatusOr<gpureduce::Partial> partial) { done.set_value(std::move(partial)); });
  return done.get_future().get();
}

// Whether a float64 product of these values, taken in any order, stays in the normal range: the
// sum of |log2 |x|| over the finite non-zero ones bounds every partial product. Then the CPU's
// product is within a few ulps per factor of the exact one; otherwise a partial product may
// overflow or underflow on the way (and NumPy's float32 product would too).
bool ProductStaysNormal(std::span<const float> data) {
  double log_span = 0;
  for (float x : data) {
    if (x != 0 && std::isfinite(x)) log_span += std::fabs(std::log2(std::fabs(double{x})));
  }
  return log_span < 1000;
}

// Finalize, and the value against the reference over every float the call carried.
void CheckResult(gpureduce::Op op, const absl::StatusOr<gpureduce::Partial>& partial,
                 std::span<const float> all) {
  CheckCode(partial.status(), {}, "ReduceSession::Finish");
  GPUREDUCE_FUZZ_CHECK(partial->count == all.size(), absl::StrCat(partial->count, " counted"));
  const absl::StatusOr<gpureduce::ReduceResult> result = gpureduce::Finalize(op, *partial);
  CheckCode(result.status(), {StatusCode::kInvalidArgument}, "Finalize");
  if (all.empty() && !gpureduce::OpHasIdentity(op)) {
    GPUREDUCE_FUZZ_CHECK(!result.ok(), "empty input accepted by an op without identity");
    return;
  }
  GPUREDUCE_FUZZ_CHECK(result.ok() && result->count == all.size(), result.status().ToString());
  const testing::Reference reference = testing::ComputeReference(op, all);
  const std::string where = absl::StrCat(gpureduce::OpName(op), " of ", all.size(), " floats: ");
  if (op == gpureduce::Op::kProd && !ProductStaysNormal(all)) {
    GPUREDUCE_FUZZ_CHECK(!std::isnan(reference.value) || std::isnan(result->value),
                         absl::StrCat(where, "a NaN product came back as ", result->value));
    return;
  }
  const std::string mismatch = testing::CheckAgainstReference(op, reference, result->value,
                                                              result->index, kRelativeTolerance);
  GPUREDUCE_FUZZ_CHECK(mismatch.empty(), absl::StrCat(where, mismatch));
}

// `payload` repeated until it spans more than two of the CPU kernel's tasks; empty stays empty.
std::vector<float> Tiled(std::span<const float> payload) {
  std::vector<float> out;
  if (payload.empty()) return out;
  const size_t copies = 2 * kernels::cpu::kElementsPerTask / payload.size() + 1;
  out.reserve(copies * payload.size());
  for (size_t i = 0; i < copies; ++i) out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

// The spec of the call, resolved for both backend kinds; the CPU's is the one that runs.
std::optional<runtime::RequestSpec> Open(const v1::ReduceSpec& wire,
                                         std::unique_ptr<runtime::ReduceSession>& session) {
  // Resolving needs only the backend's kind: a stand-in reaches the GPU kernels' op and
  // block-size rules on a machine without a GPU.
  static const testing::StandInBackend cuda(kernels::BackendKind::kCuda);
  (void)Resolve(wire, cuda);
  absl::StatusOr<runtime::RequestSpec> spec = Resolve(wire, CpuBackend());
  if (!spec.ok()) return std::nullopt;
  absl::StatusOr<std::unique_ptr<runtime::ReduceSession>> opened = CpuBackend().Open(*spec);
  // The CPU backend has one device, 0: a request pinned to another is refused, and only that.
  if (wire.has_device() && wire.device() != 0) {
    CheckCode(opened.status(), {absl::StatusCode::kFailedPrecondition}, "CpuBackend::Open");
    if (!opened.ok()) return std::nullopt;
  } else {
    CheckCode(opened.status(), {}, "CpuBackend::Open");
  }
  session = std::move(*opened);
  return *spec;
}

bool DataIsSet(const v1::ReduceRequest& request) {
  return request.payload_case() == v1::ReduceRequest::kData;
}
bool DataIsSet(const v1::ReduceChunk&) { return false; }

// How the server reads a message (server/received_message.h: `data` left in gRPC's slices, the
// rest parsed), from `bytes` cut into slices of 1 to 97 bytes as `cuts` picks: it must read
// exactly what protobuf reads, and refuse (INVALID_ARGUMENT) exactly what protobuf refuses.
template <typename MessageT>
bool ParseAsTheServer(absl::string_view bytes, uint32_t cuts, MessageT* out) {
  MessageT expected;
  const bool parses = expected.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  std::vector<grpc::Slice> slices;
  for (size_t at = 0, i = 0; at < bytes.size(); ++i) {
    const size_t take = std::min<size_t>(bytes.size() - at, 1 + (cuts * (i + 7) + i * i) % 97);
    slices.emplace_back(bytes.data() + at, take);
    at += take;
  }
  server::ReceivedMessage<MessageT> received;
  *received.buffer() = grpc::ByteBuffer(slices.data(), slices.size());
  const absl::Status parsed = received.Parse();
  if (!parses) {
    CheckCode(parsed, {StatusCode::kInvalidArgument}, "ReceivedMessage::Parse");
    GPUREDUCE_FUZZ_CHECK(!parsed.ok(), "a message protobuf refuses was read");
    return false;
  }
  GPUREDUCE_FUZZ_CHECK(parsed.ok(), parsed.ToString());
  *out = received.message();
  std::string data(received.data().bytes(), '\0');
  received.data().CopyBytes(0, data.size(), reinterpret_cast<std::byte*>(data.data()));
  // An empty `data` that was on the wire sets the request's oneof; the server reads it as absent,
  // which means the same: no floats.
  if (!data.empty() || DataIsSet(expected)) out->set_data(data);
  GPUREDUCE_FUZZ_CHECK(out->SerializeAsString() == expected.SerializeAsString(),
                       "the server read a message differently from protobuf");
  return true;
}

// A Reduce call: the spec, then the payload, as ReduceUnaryReactor runs them.
void Unary(absl::string_view bytes, size_t offset, bool tile) {
  v1::ReduceRequest request;
  if (!ParseAsTheServer(bytes, static_cast<uint32_t>(bytes.size() + offset), &request)) return;
  std::unique_ptr<runtime::ReduceSession> session;
  const std::optional<runtime::RequestSpec> spec = Open(request.spec(), session);
  if (!spec.has_value()) return;
  Payload payload;
  Extract(request.data(), request.values(), kMaxRequestBytes, offset, payload);
  std::vector<float> tiled;
  std::span<const float> floats;
  if (payload.pieces.ok()) {
    floats = payload.floats;
    if (tile) {
      floats = tiled = Tiled(floats);
      ConsumeNow(*session, runtime::PayloadPieces(floats));
    } else {
      ConsumeNow(*session, *std::move(payload.pieces));
    }
  }
  // Finish also after an error: the backend may hold the session's resources until then.
  const absl::StatusOr<gpureduce::Partial> partial = FinishNow(*session);
  if (!payload.pieces.ok()) return;
  CheckResult(spec->op, partial, floats);
}

// A ReduceStream call: the spec in the first chunk only, payloads in any chunk.
void Stream(absl::string_view bytes, size_t offset) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  std::unique_ptr<runtime::ReduceSession> session;
  std::optional<runtime::RequestSpec> spec;
  std::vector<float> all;
  bool refused = false;
  for (int i = 0; i < kMaxChunks && !refused; ++i) {
    v1::ReduceChunk chunk;
    uint32_t size = 0;
    std::string message;
    if (!in.ReadVarint32(&size) || !in.ReadString(&message, static_cast<int>(size))) break;
    if (!ParseAsTheServer(message, static_cast<uint32_t>(i + offset), &chunk)) break;
    if (i == 0) {
      // Without a spec the reactor refuses the call before anything runs.
      if (!chunk.has_spec()) return;
      spec = Open(chunk.spec(), session);
      if (!spec.has_value()) return;
    } else if (chunk.has_spec()) {
      refused = true;  // a repeated spec: INVALID_ARGUMENT
      break;
    }
    Payload payload;
    Extract(chunk.data(), chunk.values(), kMaxChunkBytes, offset, payload);
    if (!payload.pieces.ok()) {
      refused = true;
      break;
    }
    all.insert(all.end(), payload.floats.begin(), payload.floats.end());
    ConsumeNow(*session, *std::move(payload.pieces));
  }
  if (session == nullptr) return;
  const absl::StatusOr<gpureduce::Partial> partial = FinishNow(*session);
  if (!refused) CheckResult(spec->op, partial, all);
}

}  // namespace
}  // namespace gpureduce::fuzzing

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const absl::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t offset = (data[0] >> 1) & 3;
  if (data[0] & 1) {
    gpureduce::fuzzing::Stream(rest, offset);
  } else {
    gpureduce::fuzzing::Unary(rest, offset, (data[0] & 8) != 0);
  }
  return 0;
}
