#include "tests/soak/soak_traffic.h"

#include <chrono>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/client_context.h"
#include "tests/integration/server_process.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"
#include "tests/support/wire.h"

namespace gpureduce::testing::soak {
namespace {

constexpr v1::Op kOps[] = {v1::SUM,  v1::PROD,        v1::MIN,    v1::MAX,
                           v1::MEAN, v1::SUM_SQUARES, v1::ARGMIN, v1::ARGMAX};
// Awkward sizes, from one element to a few MiB.
constexpr size_t kSizes[] = {1, 2, 31, 1000, 4097, 65537, 262147, 1000003};

std::string OpName(v1::Op op) { return absl::AsciiStrToLower(v1::Op_Name(op)); }

std::vector<float> Data(v1::Op op, size_t n, uint64_t seed) {
  return op == v1::PROD ? NearOneData(n, seed) : MixedSignData(n, seed);
}

// Empty when `status` has `code` and its message holds `words`.
std::string Expect(const grpc::Status& status, grpc::StatusCode code, const char* words) {
  if (status.error_code() == code && absl::StrContains(status.error_message(), words)) return "";
  return absl::StrCat("expected code ", code, " with \"", words, "\", got code ",
                      status.error_code(), ": ", status.error_message());
}

v1::ReduceChunk Chunk(std::span<const float> data, const v1::ReduceSpec* spec) {
  v1::ReduceChunk chunk;
  if (spec != nullptr) *chunk.mutable_spec() = *spec;
  chunk.set_data(Bytes(data));
  return chunk;
}

// Writes `chunks` on a new stream and half-closes; the status.
grpc::Status SendStream(v1::Reducer::Stub& stub, const std::vector<v1::ReduceChunk>& chunks,
                        grpc::ClientContext& context, v1::ReduceResponse* response) {
  auto writer = stub.ReduceStream(&context, response);
  for (const v1::ReduceChunk& chunk : chunks) {
    if (!writer->Write(chunk)) break;
  }
  writer->WritesDone();
  return writer->Finish();
}

// Empty when `got` is the reference's answer for `data`, else what is wrong.
std::string Problem(v1::Op op, const std::vector<float>& data,
                    const absl::StatusOr<v1::ReduceResponse>& got, double tolerance) {
  if (!got.ok()) return got.status().ToString();
  const gpureduce::Op domain = static_cast<gpureduce::Op>(op);
  return CheckAgainstReference(domain, ComputeReference(domain, data), got->value(), got->index(),
                               tolerance);
}

}  // namespace

Traffic::Traffic(client::ReducerClient& reducer, uint64_t seed, TrafficOptions options)
    : reducer_(reducer), random_(seed), options_(std::move(options)) {}

Outcome Traffic::Next() {
  // Per mille; a stall holds its worker for the idle timeout, so it is rare.
  const int pick = std::uniform_int_distribution<int>(0, 999)(random_);
  if (pick < 420) return Unary();
  if (pick < 720) return Stream();
  if (pick < 880) return BadRequest();
  if (pick < 950) return Cancel();
  if (pick < 990) return Deadline();
  return options_.idle_timeout > absl::ZeroDuration() ? Stall() : Unary();
}

Outcome Traffic::Unary() {
  const v1::Op op = kOps[random_() % std::size(kOps)];
  const size_t n = kSizes[random_() % std::size(kSizes)];
  const std::vector<float> data = Data(op, n, random_());
  Outcome out{"unary", absl::StrCat(OpName(op), " n=", n), ""};
  absl::StatusOr<v1::ReduceResponse> got = reducer_.Reduce(Spec(op), data);
  out.problem = Problem(op, data, got, options_.tolerance);
  return out;
}

Outcome Traffic::Stream() {
  const v1::Op op = kOps[random_() % std::size(kOps)];
  const size_t n = kSizes[random_() % std::size(kSizes)] * (1 + random_() % 4);
  const size_t chunk = 1 + random_() % 300000;  // odd chunkings, one element to about 1 MiB
  const std::vector<float> data = Data(op, n, random_());
  Outcome out{"stream", absl::StrCat(OpName(op), " n=", n, " chunk=", chunk), ""};
  absl::StatusOr<v1::ReduceResponse> got = StreamFloats(reducer_, Spec(op, "", 0, n), data, chunk);
  out.problem = Problem(op, data, got, options_.tolerance);
  return out;
}

Outcome Traffic::BadRequest() {
  const std::vector<float> few = MixedSignData(1 + random_() % 100, random_());
  const v1::ReduceSpec sum = Spec(v1::SUM);
  grpc::ClientContext context;
  v1::ReduceResponse response;
  v1::ReduceRequest request;
  *request.mutable_spec() = sum;
  request.set_data(Bytes(few));
  const grpc::StatusCode invalid = grpc::StatusCode::INVALID_ARGUMENT;
  switch (random_() % 9) {
    case 0:
      request.mutable_spec()->set_op(static_cast<v1::Op>(99));
      return {"bad", "unknown op",
              Expect(reducer_.stub().Reduce(&context, request, &response), invalid, "op")};
    case 1:
      request.mutable_spec()->set_kernel("no_such_kernel");
      return {"bad", "unknown kernel",
              Expect(reducer_.stub().Reduce(&context, request, &response), invalid, "kernel")};
    case 2:
      request.add_values(1.0f);
      return {"bad", "data and values",
              Expect(reducer_.stub().Reduce(&context, request, &response), invalid, "both")};
    case 3:
      request.mutable_data()->push_back('x');
      return {
          "bad", "length not a multiple of 4",
          Expect(reducer_.stub().Reduce(&context, request, &response), invalid, "multiple of 4")};
    case 4:
      return {"bad", "stream without a spec",
              Expect(SendStream(reducer_.stub(), {Chunk(few, nullptr)}, context, &response),
                     invalid, "spec")};
    case 5:
      return {"bad", "spec repeated",
              Expect(SendStream(reducer_.stub(), {Chunk(few, &sum), Chunk(few, &sum)}, context,
                                &response),
                     invalid, "repeats the spec")};
    case 6: {
      const v1::ReduceSpec declared = Spec(v1::SUM, "", 0, few.size() + 1);
      return {"bad", "fewer elements than expected_count",
              Expect(SendStream(reducer_.stub(), {Chunk(few, &declared)}, context, &response),
                     invalid, "expected_count")};
    }
    case 7:
      request.mutable_spec()->set_op(v1::ARGMIN);
      request.clear_data();
      return {"bad", "empty argmin",
              Expect(reducer_.stub().Reduce(&context, request, &response), invalid, "empty")};
    default: {
      if (options_.max_request_bytes == 0) return Unary();
      const std::vector<float> big(options_.max_request_bytes / sizeof(float) + 1, 0.5f);
      request.set_data(Bytes(big));
      return {"bad", "unary over --max-request-bytes",
              Expect(reducer_.stub().Reduce(&context, request, &response),
                     grpc::StatusCode::RESOURCE_EXHAUSTED, "ReduceStream")};
    }
  }
}

Outcome Traffic::Cancel() {
  grpc::ClientContext context;
  v1::ReduceResponse response;
  auto writer = reducer_.stub().ReduceStream(&context, &response);
  const v1::ReduceSpec spec = Spec(v1::SUM);
  const int chunks = 1 + int(random_() % 8);
  for (int i = 0; i < chunks; ++i) {
    if (!writer->Write(Chunk(MixedSignData(65536, random_()), i == 0 ? &spec : nullptr))) break;
  }
  context.TryCancel();
  return {"cancel", absl::StrCat("after ", chunks, " chunks"),
          Expect(writer->Finish(), grpc::StatusCode::CANCELLED, "")};
}

Outcome Traffic::Deadline() {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  v1::ReduceResponse response;
  auto writer = reducer_.stub().ReduceStream(&context, &response);
  const v1::ReduceSpec spec = Spec(v1::MAX);
  for (int i = 0; i < 20; ++i) {  // 20 chunks 25 ms apart outlive the 200 ms deadline
    if (!writer->Write(Chunk(MixedSignData(4096, random_()), i == 0 ? &spec : nullptr))) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  writer->WritesDone();
  return {"deadline", "200 ms, a chunk every 25 ms",
          Expect(writer->Finish(), grpc::StatusCode::DEADLINE_EXCEEDED, "")};
}

Outcome Traffic::Stall() {
  grpc::ClientContext context;
  v1::ReduceResponse response;
  auto writer = reducer_.stub().ReduceStream(&context, &response);
  const v1::ReduceSpec spec = Spec(v1::SUM);
  writer->Write(Chunk(MixedSignData(1000, random_()), &spec));
  // Sends nothing more: the server's idle timeout must end it.
  return {"stall", absl::StrCat("idle past ", absl::FormatDuration(options_.idle_timeout)),
          Expect(writer->Finish(), grpc::StatusCode::CANCELLED, "--stream-idle-timeout")};
}

}  // namespace gpureduce::testing::soak
