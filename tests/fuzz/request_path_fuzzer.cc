// The server's request path from raw bytes, without gRPC's transport: a ReduceRequest (a Reduce
// call) or a run of ReduceChunks (a ReduceStream call) read from the input as the server reads
// them (ReceivedMessage over slices, checked against protobuf), then what ReduceCall does with
// it: ResolveSpec (op or ops, dtype, ddof), the CPU backend's session, ExtractPayload, a
// stream's ElementCarry (chunks may end inside an element), Consume, Finish and FinalizeOp for
// each op. Every refusal must carry a code the README's error table documents for it, and every
// typed result must match the independent reference (tests/integration/array_api_reference.h:
// long double and __int128, NumPy's result dtypes, wrap and overflow) within the contract's
// bound. Admission, deadlines and the reactors' flow are left to the unit and system tests.
//
// Input: byte 0 picks the call, bit 0 unary (0) or stream (1); bits 1-2 shift the `data` bytes
// 0-3 bytes off alignment (and the bytes are cut in two pieces) so the CPU backend's copy
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
#include "common/reduction/op_name.h"
#include "common/reduction/op_result.h"
#include "google/protobuf/io/coded_stream.h"
#include "gpureduce/v1/reduce.pb.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/slice.h"
#include "kernels/kernel_registry.h"
#include "kernels/reduce.h"
#include "runtime/backend.h"
#include "runtime/backend_factory.h"
#include "server/element_carry.h"
#include "server/payload.h"
#include "server/received_message.h"
#include "server/request_spec.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/integration/array_api_reference.h"
#include "tests/support/stand_in_backend.h"
#include "wire/dtype_mapping.h"
#include "wire/result_mapping.h"

namespace gpureduce::fuzzing {
namespace {

using absl::StatusCode;
using google::protobuf::RepeatedField;

// Small limits, so that inputs of a few KiB reach them.
constexpr uint64_t kMaxRequestBytes = 8192;
constexpr uint64_t kMaxChunkBytes = 1024;
constexpr int kMaxChunks = 256;

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

// The ops a wire spec names, or nullopt where it must be refused: `op` and `ops` both set, an op
// unset or unknown, one listed twice.
std::optional<std::vector<Op>> WireOps(const v1::ReduceSpec& wire) {
  auto known = [](int op) { return op >= v1::SUM && op <= v1::NANSTD; };
  std::vector<Op> ops;
  if (wire.ops_size() == 0) {
    if (!known(wire.op())) return std::nullopt;
    ops.push_back(static_cast<Op>(wire.op()));
    return ops;
  }
  if (wire.op() != v1::OP_UNSPECIFIED) return std::nullopt;
  for (int op : wire.ops()) {
    if (!known(op) || std::find(ops.begin(), ops.end(), static_cast<Op>(op)) != ops.end()) {
      return std::nullopt;
    }
    ops.push_back(static_cast<Op>(op));
  }
  return ops;
}

// ResolveSpec: INVALID_ARGUMENT or FAILED_PRECONDITION only, INVALID_ARGUMENT for a bad op list,
// dtype or ddof, and an accepted spec is what the wire asked for (ops in order, dtype, ddof), on
// a kernel of this backend that runs the ops over the dtype.
absl::StatusOr<runtime::RequestSpec> Resolve(const v1::ReduceSpec& wire,
                                             const runtime::Backend& backend) {
  absl::StatusOr<runtime::RequestSpec> spec = server::ResolveSpec(wire, backend);
  CheckCode(spec.status(), {StatusCode::kInvalidArgument, StatusCode::kFailedPrecondition},
            "ResolveSpec");
  const std::optional<std::vector<Op>> ops = WireOps(wire);
  const bool bad_dtype = wire.dtype() < v1::DTYPE_UNSPECIFIED || wire.dtype() > v1::INT64;
  const bool bad_ddof = !std::isfinite(wire.ddof());  // NumPy takes negative ones too
  if (!ops.has_value() || bad_dtype || bad_ddof) {
    GPUREDUCE_FUZZ_CHECK(spec.status().code() == StatusCode::kInvalidArgument,
                         absl::StrCat(spec.status().ToString(), " for ", wire.ShortDebugString()));
  }
  if (!spec.ok()) return spec;
  const kernels::KernelInfo& kernel = kernels::GetKernel(spec->kernel);
  const bool auto_kernel = wire.kernel().empty() || wire.kernel() == kernels::kAutoKernel;
  const std::span<const Op> resolved = spec->ops();
  GPUREDUCE_FUZZ_CHECK(std::vector<Op>(resolved.begin(), resolved.end()) == *ops,
                       wire.ShortDebugString());
  GPUREDUCE_FUZZ_CHECK(spec->op == ops->front(), wire.ShortDebugString());
  GPUREDUCE_FUZZ_CHECK(wire::ToProto(spec->dtype) ==
                           (wire.dtype() == v1::DTYPE_UNSPECIFIED ? v1::FLOAT32 : wire.dtype()),
                       wire.ShortDebugString());
  GPUREDUCE_FUZZ_CHECK(spec->ddof == wire.ddof(), wire.ShortDebugString());
  GPUREDUCE_FUZZ_CHECK(kernel.backend == backend.kind(), kernel.name);
  GPUREDUCE_FUZZ_CHECK(
      spec->auto_kernel == auto_kernel && (auto_kernel || kernel.name == wire.kernel()),
      kernel.name);
  GPUREDUCE_FUZZ_CHECK(kernels::ValidateRequest(kernel, resolved, spec->dtype).ok(), kernel.name);
  GPUREDUCE_FUZZ_CHECK(
      spec->block_size == wire.block_size() && spec->expected_count == wire.expected_count(), "");
  return spec;
}

// One message's payload, as ReduceCall::Payload takes it: `data` moved `offset` bytes off its
// alignment and cut in two pieces (an element may straddle the cut), as gRPC's slices hold it.
// Owns what the pieces point into; `bytes` is what they hold.
struct Payload {
  std::string shifted;
  absl::StatusOr<runtime::PayloadPieces> pieces;
  std::string bytes;
};

// ExtractPayload: INVALID_ARGUMENT for both fields set, `values` with another dtype than float32,
// or (`whole_elements`, a unary call) a byte count that is not a multiple of the element size;
// RESOURCE_EXHAUSTED over the limit; and otherwise exactly the bytes sent.
void Extract(absl::string_view data, const RepeatedField<float>& values, uint64_t max_bytes,
             size_t offset, DType dtype, bool whole_elements, Payload& out) {
  out.shifted.assign(offset, '\0');
  out.shifted.append(data.data(), data.size());
  const absl::string_view moved = absl::string_view(out.shifted).substr(offset);
  const size_t cut = moved.size() / 3 + offset;
  runtime::PayloadPieces pieces;
  pieces.Append(reinterpret_cast<const std::byte*>(moved.data()), std::min(cut, moved.size()));
  if (cut < moved.size()) {
    pieces.Append(reinterpret_cast<const std::byte*>(moved.data() + cut), moved.size() - cut);
  }
  out.pieces =
      server::ExtractPayload(pieces, values, max_bytes, "stream it", dtype, whole_elements);
  const absl::Status& status = out.pieces.status();
  CheckCode(status, {StatusCode::kInvalidArgument, StatusCode::kResourceExhausted},
            "ExtractPayload");
  const bool both = !data.empty() && !values.empty();
  const bool values_not_float32 = !values.empty() && dtype != DType::kFloat32;
  const uint64_t bytes = data.empty() ? uint64_t(values.size()) * sizeof(float) : data.size();
  const bool too_big = bytes > max_bytes;
  const bool ragged = whole_elements && data.size() % DTypeSize(dtype) != 0;
  if (!status.ok()) {
    GPUREDUCE_FUZZ_CHECK(
        (status.code() == StatusCode::kInvalidArgument && (both || values_not_float32 || ragged)) ||
            (status.code() == StatusCode::kResourceExhausted && too_big),
        status.ToString());
    return;
  }
  GPUREDUCE_FUZZ_CHECK(!both && !values_not_float32 && !too_big && !ragged,
                       "an invalid payload was accepted");
  GPUREDUCE_FUZZ_CHECK(out.pieces->bytes() == bytes, absl::StrCat(out.pieces->bytes(), " bytes"));
  GPUREDUCE_FUZZ_CHECK(out.pieces->element_bytes() == (data.empty() ? 4 : DTypeSize(dtype)),
                       out.pieces->element_bytes());
  out.bytes.resize(bytes);
  if (bytes != 0) {
    out.pieces->CopyBytes(0, bytes, reinterpret_cast<std::byte*>(out.bytes.data()));
  }
  const void* sent = data.empty() ? static_cast<const void*>(values.data()) : moved.data();
  GPUREDUCE_FUZZ_CHECK(bytes == 0 || std::memcmp(out.bytes.data(), sent, bytes) == 0,
                       "the payload's bytes differ from the bytes sent");
}

void ConsumeNow(runtime::ReduceSession& session, runtime::PayloadPieces data) {
  std::promise<absl::Status> done;
  session.ConsumePieces(std::move(data),
                        [&done](absl::Status status) { done.set_value(std::move(status)); });
  const absl::Status status = done.get_future().get();
  CheckCode(status, {}, "ReduceSession::ConsumePieces");
}

absl::StatusOr<Stats> FinishNow(runtime::ReduceSession& session) {
  std::promise<absl::StatusOr<Stats>> done;
  session.Finish([&done](absl::StatusOr<Stats> stats) { done.set_value(std::move(stats)); });
  return done.get_future().get();
}

// Whether the float64 accumulations (sums, Welford moments, squares) can be held to the
// reference: not where float64 elements reach beyond 2^400 or below 2^-400 in magnitude (a
// partial sum or square overflows or underflows float64 on the way, which the contract does not
// promise against), nor VAR and STD of int64 elements past 2^53 (docs/array-api.md: the moments
// are float64 and promise no more there).
bool Accumulates(Op op, const testing::array_api::Array& a) {
  const Op base = NanFormOf(op);
  if (base == Op::kMin || base == Op::kMax || base == Op::kArgMin || base == Op::kArgMax) {
    return true;
  }
  if (a.dtype == v1::INT64 && (base == Op::kVar || base == Op::kStd)) {
    for (size_t i = 0; i < a.size(); ++i) {
      const int64_t v = a.Raw<int64_t>(i);
      if (v > (int64_t{1} << 53) || v < -(int64_t{1} << 53)) return false;
    }
  }
  if (a.dtype != v1::FLOAT64 || base == Op::kProd) return true;
  for (size_t i = 0; i < a.size(); ++i) {
    const double v = std::fabs(a.Raw<double>(i));
    if (std::isfinite(v) && v != 0 && (v > 0x1p400 || v < 0x1p-400)) return false;
  }
  return true;
}

// FinalizeOp for each op, as ReduceCall::FillResults calls it, against the reference over every
// element the call carried: the same refusals (INVALID_ARGUMENT only), typed results that match.
void CheckResult(const runtime::RequestSpec& spec, const absl::StatusOr<Stats>& stats,
                 const std::string& all) {
  CheckCode(stats.status(), {}, "ReduceSession::Finish");
  const testing::array_api::Array a{wire::ToProto(spec.dtype), all};
  GPUREDUCE_FUZZ_CHECK(stats->count == a.size(), absl::StrCat(stats->count, " counted"));
  for (Op op : spec.ops()) {
    const absl::StatusOr<OpResult> result = FinalizeOp(op, spec.dtype, spec.ddof, *stats);
    CheckCode(result.status(), {StatusCode::kInvalidArgument}, "FinalizeOp");
    const v1::Op wire_op = static_cast<v1::Op>(op);
    const testing::array_api::Expected want =
        testing::array_api::Reference(wire_op, a, spec.ddof, /*exact_small_floats=*/false);
    const std::string where = absl::StrCat(OpName(op), " of ", a.size(), " ", DTypeName(spec.dtype),
                                           ", ddof ", spec.ddof, ": ");
    GPUREDUCE_FUZZ_CHECK(result.ok() != want.refused,
                         absl::StrCat(where, result.status().ToString()));
    if (!result.ok()) continue;
    GPUREDUCE_FUZZ_CHECK(result->count == a.size(), where);
    v1::OpResult got;
    wire::ToProto(*result, &got);
    if (!Accumulates(op, a)) {
      GPUREDUCE_FUZZ_CHECK(got.dtype() == want.dtype, where);
      continue;
    }
    const std::string mismatch = testing::array_api::Check(want, wire_op, got);
    GPUREDUCE_FUZZ_CHECK(mismatch.empty(), absl::StrCat(where, mismatch));
  }
}

// `payload` repeated until it spans more than two of the CPU kernel's tasks; empty stays empty.
std::string Tiled(const std::string& payload, size_t element_bytes) {
  std::string out;
  if (payload.empty()) return out;
  const size_t elements = payload.size() / element_bytes;
  const DType same_tasks = element_bytes == 2 ? DType::kFloat16 : DType::kFloat32;
  const size_t copies = 2 * kernels::cpu::TaskElements(same_tasks) / elements + 1;
  out.reserve(copies * payload.size());
  for (size_t i = 0; i < copies; ++i) out += payload;
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

runtime::PayloadPieces PiecesOf(const std::string& bytes, size_t element_bytes) {
  runtime::PayloadPieces pieces;
  pieces.Append(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
  pieces.set_element_bytes(element_bytes);
  return pieces;
}

// A Reduce call: the spec, then the payload, as ReduceUnaryReactor runs them.
void Unary(absl::string_view bytes, size_t offset, bool tile) {
  v1::ReduceRequest request;
  if (!ParseAsTheServer(bytes, static_cast<uint32_t>(bytes.size() + offset), &request)) return;
  std::unique_ptr<runtime::ReduceSession> session;
  const std::optional<runtime::RequestSpec> spec = Open(request.spec(), session);
  if (!spec.has_value()) return;
  Payload payload;
  Extract(request.data(), request.values(), kMaxRequestBytes, offset, spec->dtype,
          /*whole_elements=*/true, payload);
  std::string tiled;
  const std::string* all = &payload.bytes;
  if (payload.pieces.ok()) {
    if (tile) {
      tiled = Tiled(payload.bytes, DTypeSize(spec->dtype));
      all = &tiled;
      ConsumeNow(*session, PiecesOf(tiled, DTypeSize(spec->dtype)));
    } else {
      ConsumeNow(*session, *std::move(payload.pieces));
    }
  }
  // Finish also after an error: the backend may hold the session's resources until then.
  const absl::StatusOr<Stats> stats = FinishNow(*session);
  if (!payload.pieces.ok()) return;
  CheckResult(*spec, stats, *all);
}

// A ReduceStream call: the spec in the first chunk only, payloads in any chunk, each chunk's
// bytes through an ElementCarry (alternating its head buffers) as ReduceCall::Payload does; a
// stream that ends inside an element is refused.
void Stream(absl::string_view bytes, size_t offset) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  std::unique_ptr<runtime::ReduceSession> session;
  std::optional<runtime::RequestSpec> spec;
  server::ElementCarry carry;
  std::string all;
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
      carry.set_element_bytes(DTypeSize(spec->dtype));
    } else if (chunk.has_spec()) {
      refused = true;  // a repeated spec: INVALID_ARGUMENT
      break;
    }
    // A values chunk while an element waits for its bytes is refused (ReduceCall::Payload).
    if (!chunk.values().empty() && carry.held() != 0) {
      refused = true;
      break;
    }
    Payload payload;
    Extract(chunk.data(), chunk.values(), kMaxChunkBytes, offset, spec->dtype,
            /*whole_elements=*/false, payload);
    if (!payload.pieces.ok()) {
      refused = true;
      break;
    }
    all += payload.bytes;
    runtime::PayloadPieces whole = *std::move(payload.pieces);
    if (chunk.values().empty()) {
      const size_t held_before = carry.held();
      whole = carry.Take(whole, i % 2);
      GPUREDUCE_FUZZ_CHECK(whole.bytes() % DTypeSize(spec->dtype) == 0 &&
                               whole.bytes() + carry.held() == held_before + payload.bytes.size(),
                           absl::StrCat(whole.bytes(), " bytes out, ", carry.held(), " held"));
    }
    ConsumeNow(*session, std::move(whole));
  }
  if (session == nullptr) return;
  const absl::StatusOr<Stats> stats = FinishNow(*session);
  GPUREDUCE_FUZZ_CHECK(carry.held() == all.size() % DTypeSize(spec->dtype) || refused,
                       absl::StrCat(carry.held(), " held of ", all.size()));
  if (refused || carry.held() != 0) return;  // INVALID_ARGUMENT: it ended inside an element
  CheckResult(*spec, stats, all);
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
