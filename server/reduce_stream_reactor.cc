#include "server/reduce_stream_reactor.h"

#include <deque>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "server/auth/authorization.h"

namespace gpureduce::server {

ReduceStreamReactor::ReduceStreamReactor(ServiceState& state, grpc::CallbackServerContext* context,
                                         grpc::ByteBuffer* response)
    : call_(state, Method::kReduceStream, context->peer(),
            MetadataBytes(context->client_metadata())),
      idle_watch_(state.idle_watch),
      metrics_(state.metrics),
      context_(context),
      response_bytes_(response) {
  idle_watch_.Add(this);
  // A call its client has already cancelled (rapid reset) costs nothing more: no admission,
  // no read, no log line.
  absl::Status admitted;
  if (context->IsCancelled()) {
    call_.CancelledByClient();
    admitted = absl::CancelledError("the call was cancelled before the server saw it");
  }
  if (admitted.ok()) admitted = Authorize(state.tokens, *context);
  if (admitted.ok()) admitted = call_.Admit();
  if (!admitted.ok()) {
    StreamFlow::Step step;
    {
      std::lock_guard<std::mutex> lock(mu_);
      step = flow_.Failed(std::move(admitted));
    }
    Run(std::move(step));
    return;
  }
  Read(StreamFlow::kFirstRead);
}

void ReduceStreamReactor::Read(int buffer) {
  chunks_[buffer].Release();  // the bytes the backend is done with go back before the next come
  WaitingForMessage();        // before StartRead: the read may complete at once on another thread
  call_.ReadStarted();
  StartRead(chunks_[buffer].buffer());
}

void ReduceStreamReactor::OnDone() {
  idle_watch_.Remove(this);
  Unref();
}

void ReduceStreamReactor::Unref() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

void ReduceStreamReactor::OnIdle(absl::Duration limit, int64_t since, bool full) {
  StreamFlow::Step step;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // A message that arrived since the watch looked keeps the stream (OnReadDone clears the
    // stamp before it takes mu_, so under mu_ this is settled for that message).
    if (flow_.finished() || !StillWaitingSince(since)) return;
    metrics_.StreamIdleEnded();
    step = flow_.Failed(absl::CancelledError(absl::StrCat(
        "no message from the client for ", absl::FormatDuration(limit),
        full ? " while the server was full (the server's --stream-idle-timeout-when-full)"
             : " (the server's --stream-idle-timeout)",
        ", so the stream was ended; send chunks more often, or ask the operator for a longer "
        "timeout")));
  }
  Run(std::move(step));
}

void ReduceStreamReactor::OnReadDone(bool ok) {
  MessageArrived();
  StreamFlow::Step step;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (flow_.finished()) return;
    const int buffer = flow_.read_buffer();
    if (!ok) {
      // Half-close by the client, or a broken call: only the former ends the stream normally.
      const bool cancelled = context_->IsCancelled();
      if (cancelled) call_.CancelledByClient();
      step = flow_.ReadsEnded(cancelled);
    } else if (absl::Status accepted = AcceptChunk(buffer); accepted.ok()) {
      step = flow_.ChunkReceived(!payloads_[buffer].empty());
    } else {
      step = flow_.Failed(std::move(accepted));
    }
  }
  Run(std::move(step));
}

void ReduceStreamReactor::OnCancel() {
  call_.CancelledByClient();
  StreamFlow::Step step;
  {
    std::lock_guard<std::mutex> lock(mu_);
    step = flow_.Cancelled();
  }
  call_.Cancel();  // a chunk waiting for backend resources gives up
  Run(std::move(step));
}

void ReduceStreamReactor::Conclude(absl::Status status) {
  call_.Complete(std::move(status), &response_, [this](grpc::Status result) {
    if (result.ok()) result = SerializeResponse(response_, response_bytes_);
    Finish(std::move(result));
  });
}

absl::Status ReduceStreamReactor::AcceptChunk(int buffer) {
  call_.Received(chunks_[buffer].buffer()->Length());
  if (absl::Status parsed = chunks_[buffer].Parse(); !parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("chunk ", call_.chunks() + 1, ": ", parsed.message()));
  }
  const v1::ReduceChunk& chunk = chunks_[buffer].message();
  if (!spec_seen_) {
    if (!chunk.has_spec()) {
      return absl::InvalidArgumentError(
          "the first chunk of a ReduceStream must carry the spec (op, kernel, block_size, "
          "expected_count)");
    }
    if (absl::Status opened = call_.Open(chunk.spec()); !opened.ok()) return opened;
    spec_seen_ = true;
  } else if (chunk.has_spec()) {
    return absl::InvalidArgumentError(
        "a later chunk repeats the spec; send the spec in the first chunk only");
  }
  absl::StatusOr<runtime::PayloadPieces> payload =
      call_.Payload(chunks_[buffer].data(), chunk.values(), call_.limits().max_chunk_bytes,
                    "send smaller chunks (the server's --max-chunk-bytes)", buffer);
  if (!payload.ok()) return payload.status();
  payloads_[buffer] = *std::move(payload);
  return absl::OkStatus();
}

namespace {
// The reactor whose step this thread is carrying out, and where the steps that arise meanwhile
// on this thread wait (Run's loop).
struct RunningStep {
  const void* reactor = nullptr;
  std::deque<StreamFlow::Step>* arisen = nullptr;
};
thread_local RunningStep running;
}  // namespace

void ReduceStreamReactor::Run(StreamFlow::Step step) {
  // A backend may answer a Consume on this thread before it returns (the CPU's chunk of up to
  // 1 MiB), and the answer's step hands it the next chunk: run in place, each chunk of a
  // long stream would nest a level deeper. Such steps wait for the step in progress instead, in
  // a queue of this frame (not of the reactor, which the last step's Finish may delete).
  if (running.reactor == this) {
    running.arisen->push_back(std::move(step));
    return;
  }
  std::deque<StreamFlow::Step> arisen;
  const RunningStep outer = std::exchange(running, RunningStep{this, &arisen});
  RunStep(std::move(step));
  while (!arisen.empty()) {
    StreamFlow::Step next = std::move(arisen.front());
    arisen.pop_front();
    RunStep(std::move(next));
  }
  running = outer;
}

void ReduceStreamReactor::RunStep(StreamFlow::Step step) {
  // The read first: handing a chunk to the backend may take a moment, and gRPC should be
  // receiving the next chunk meanwhile.
  if (step.read >= 0) {
    Read(step.read);
    StreamFlow::Step after_read;
    {
      std::lock_guard<std::mutex> lock(mu_);
      after_read = flow_.ReadStarted();
    }
    Run(std::move(after_read));
  }
  if (step.compute >= 0) {
    call_.Consume(std::move(payloads_[step.compute]),
                  [this](absl::Status status) { OnComputeDone(std::move(status)); });
  }
  if (step.finish) Conclude(std::move(step.status));
}

void ReduceStreamReactor::OnComputeDone(absl::Status status) {
  StreamFlow::Step step;
  {
    std::lock_guard<std::mutex> lock(mu_);
    step = flow_.ComputeDone(std::move(status));
  }
  Run(std::move(step));
}

}  // namespace gpureduce::server
