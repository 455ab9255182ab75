#pragma once

// The part of a Reduce or ReduceStream call that does not depend on the RPC's shape: admission,
// the spec, payload checks, counting, the backend session, timing, the response and the log line.

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpureduce/v1/reduce.pb.h"
#include "grpcpp/support/status.h"
#include "kernels/reduce.h"
#include "runtime/backend.h"
#include "server/admission.h"
#include "server/array_output.h"
#include "server/connections/call_account.h"
#include "server/element_carry.h"
#include "server/payload.h"
#include "server/service_state.h"

namespace gpureduce::server {

class ReduceCall {
 public:
  // `metadata_bytes`: what the call's headers took (MetadataBytes; tests have none).
  ReduceCall(ServiceState& state, Method method, std::string peer, uint64_t metadata_bytes = 0);
  ~ReduceCall();
  ReduceCall(const ReduceCall&) = delete;
  ReduceCall& operator=(const ReduceCall&) = delete;

  // UNAVAILABLE before the self-check has passed; RESOURCE_EXHAUSTED when the server is full.
  absl::Status Admit();

  // Resolves the spec and opens a backend session. `payload_bytes`: the bytes a unary request
  // carries (its one payload), else 0 for a stream (the spec's expected_count counts).
  // `device`: the GPU the data is on (a CUDA shared-memory region), -1 any. `host_region`: the
  // data is a region of system shared memory (the CPU and the GPUs may read it at once).
  absl::Status Open(const v1::ReduceSpec& spec, uint64_t payload_bytes = 0, int device = -1,
                    bool host_region = false);

  // A message's elements (`data` where it was received, or `values`), checked against
  // `max_bytes` and the declared expected_count (see ExtractPayload). A stream's chunk
  // (`stream_buffer` 0 or 1, the chunk buffer it arrived in) may end inside an element: its
  // bytes wait for the next chunk (ElementCarry); a unary payload must hold whole elements.
  absl::StatusOr<runtime::PayloadPieces> Payload(
      const runtime::PayloadPieces& data, const google::protobuf::RepeatedField<float>& values,
      uint64_t max_bytes, const char* too_big, int stream_buffer = -1);

  // A read of the call's next message was started. Until Received, what arrived of it is held
  // by gRPC; a call that ends meanwhile (or whose read fails) had gRPC drop it, and credits
  // its connection for it (Connection::CreditDropped).
  void ReadStarted() { reading_.store(true, std::memory_order_relaxed); }
  // A message of `bytes` arrived whole: its connection has accounted for them (memory_guard.h).
  void Received(uint64_t bytes);
  // The call's time (server_us, the metrics) counts from now: a Reduce's from its message's
  // arrival, so that a client's upload pace does not count as the server's time (a stream's
  // counts from its start, its chunks' arrival included).
  void RestartClock() { start_ = std::chrono::steady_clock::now(); }

  // Hands the payload to the backend session (see ReduceSession::ConsumePieces).
  void Consume(runtime::PayloadPieces data, runtime::ConsumeDone done);

  // A payload in a shared-memory region (`input` of `region`) must not share bytes with the
  // spec's output region, if it names one (ArrayOutput::CheckApart). After Open.
  absl::Status CheckOutputApart(const Region& region, const v1::SharedMemoryRef& input) const {
    return output_ == nullptr ? absl::OkStatus() : output_->CheckApart(region, input);
  }

  // The same for floats in a shared-memory region, counted and checked as a payload is.
  absl::Status CountShared(uint64_t elements) { return Count(elements); }
  void ConsumeShared(const runtime::SharedSource& source, runtime::ConsumeDone done);

  // Ends the call: waits for the backend's work on it, then (on OK) finalizes the result into
  // `response`, logs the outcome and hands `finish` the gRPC status to finish the RPC with.
  // Call once, with no Consume in flight. `finish` may run on a backend thread.
  void Complete(absl::Status status, v1::ReduceResponse* response,
                absl::AnyInvocable<void(grpc::Status) &&> finish);

  // Wakes a Consume that waits for backend resources (see ReduceSession::Cancel); before Open
  // has made the session, the session is cancelled as Open makes it.
  void Cancel();
  // The client cancelled the call (or its deadline passed): its end is not logged as a failure.
  // Counts against the connection's budget of cancelled calls (call_account.h).
  void CancelledByClient();

  // Messages that carried a payload so far.
  uint64_t chunks() const { return chunks_; }
  const ServiceLimits& limits() const { return state_.limits; }
  const ServiceState& state() const { return state_; }
  const std::string& peer() const { return peer_; }

 private:
  absl::Status Count(size_t elements);
  // The call's outcome: `status`, then the checks of its end, then `fill_results` (which fills
  // `response`'s results) where all passed.
  grpc::Status Conclude(absl::Status status, absl::FunctionRef<absl::Status()> fill_results,
                        v1::ReduceResponse* response);
  // Each op's answer out of the request's stats, typed (FinalizeOp), into `response`.
  absl::Status FillResults(const gpureduce::Stats& stats, v1::ReduceResponse* response) const;
  // An array request's answers (moved out of `arrays`), one OpResult each.
  absl::Status FillArrays(std::vector<runtime::ArrayResult>& arrays,
                          v1::ReduceResponse* response) const;
  void FillResponse(v1::ReduceResponse* response) const;

  // Gives back the admission slot and what it let the connection hold.
  void Release();
  void LogFailure(const absl::Status& status) const;

  ServiceState& state_;
  const Method method_;
  std::string peer_;
  std::chrono::steady_clock::time_point start_;
  std::optional<Admission::Slot> slot_;
  // The call's place in its connection's accounts (none when the server did not accept the
  // connection itself) and the message bytes its admission lets that connection hold
  // (memory_guard.h).
  std::optional<CallAccount> account_;
  int64_t allowed_bytes_ = 0;
  std::atomic<bool> cancelled_by_client_{false};
  std::atomic<bool> reading_{false};  // a message was arriving
  std::optional<runtime::RequestSpec> spec_;
  std::unique_ptr<runtime::ReduceSession> session_;
  std::unique_ptr<ArrayOutput> output_;  // spec.output: the results go into a region
  bool cancelled_ = false;               // under session_mu_
  std::mutex session_mu_;                // Cancel may race with Open
  uint64_t max_elements_ = 0;  // the kernel's bound for the op (kernels/work_bound.h); 0: none
  uint64_t elements_ = 0;
  uint64_t chunks_ = 0;
  ElementCarry carry_;  // a stream's element cut by a chunk's end
};

}  // namespace gpureduce::server
