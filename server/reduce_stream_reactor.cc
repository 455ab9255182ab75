#include "server/reduce_stream_reactor.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace gpureduce::server {

ReduceStreamReactor::ReduceStreamReactor(ServiceState& state,
                                         grpc::CallbackServerContext* context,
                                         v1::ReduceResponse* response)
    : call_(state, "ReduceStream", context->peer()), context_(context), response_(response) {
  if (absl::Status admitted = call_.Admit(); !admitted.ok()) {
    finished_ = true;
    Conclude(admitted);
    return;
  }
  StartRead(&chunks_[read_buffer_]);
}

void ReduceStreamReactor::OnReadDone(bool ok) {
  Next next;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return;
    if (!ok) {
      // Half-close by the client, or a broken call: only the former ends the stream normally.
      reads_done_ = true;
      if (context_->IsCancelled()) cancelled_ = true;
      next = FinishIfIdleLocked();
    } else if (absl::Status accepted = AcceptChunk(read_buffer_); accepted.ok()) {
      next = ScheduleLocked(read_buffer_);
    } else {
      next = FailLocked(std::move(accepted));
    }
  }
  Run(std::move(next));
}

void ReduceStreamReactor::OnCancel() {
  Next next;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    next = FinishIfIdleLocked();
  }
  call_.Cancel();  // a chunk waiting for backend resources gives up
  Run(std::move(next));
}

void ReduceStreamReactor::Conclude(absl::Status status) {
  call_.Complete(std::move(status), response_,
                 [this](grpc::Status result) { Finish(std::move(result)); });
}

absl::Status ReduceStreamReactor::AcceptChunk(int buffer) {
  const v1::ReduceChunk& chunk = chunks_[buffer];
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
  absl::StatusOr<std::span<const float>> payload = call_.Payload(
      chunk, call_.limits().max_chunk_bytes,
      "send smaller chunks (the server's --max-chunk-bytes)", buffer);
  if (!payload.ok()) return payload.status();
  payloads_[buffer] = *payload;
  return absl::OkStatus();
}

ReduceStreamReactor::Next ReduceStreamReactor::ScheduleLocked(int received) {
  int pending = received;
  if (received >= 0 && computing_) {
    waiting_ = received;  // both buffers are busy: no read until the backend frees one
    return Next{};
  }
  if (received < 0) {
    pending = waiting_;
    waiting_ = -1;
  }
  if (pending < 0) return FinishIfIdleLocked();  // a read is in flight, or the stream is over

  Next next;
  if (!payloads_[pending].empty()) {
    computing_ = true;
    next.compute = pending;
  }
  read_buffer_ = 1 - pending;  // the other buffer is free: the backend finished with it
  next.read = read_buffer_;
  ++starting_reads_;
  return next;
}

ReduceStreamReactor::Next ReduceStreamReactor::FailLocked(absl::Status status) {
  if (error_.ok()) error_ = std::move(status);
  return FinishIfIdleLocked();
}

ReduceStreamReactor::Next ReduceStreamReactor::FinishIfIdleLocked() {
  Next next;
  // The backend may still hold a buffer, or another thread may be about to call StartRead;
  // finishing now would let gRPC delete this reactor under them.
  if (finished_ || computing_ || starting_reads_ > 0) return next;
  const bool stream_over = reads_done_ && waiting_ < 0;
  if (error_.ok() && !cancelled_ && !stream_over) return next;
  finished_ = true;
  next.finish = true;
  next.status = error_;
  if (next.status.ok() && cancelled_) {
    next.status = absl::CancelledError("the call was cancelled or its deadline passed");
  }
  return next;
}

void ReduceStreamReactor::Run(Next next) {
  // The read first: handing a chunk to the backend can take a while (the CUDA backend copies it
  // into pinned memory on this thread), and gRPC should be receiving the next one meanwhile.
  if (next.read >= 0) {
    StartRead(&chunks_[next.read]);
    Next after_read;
    {
      std::lock_guard<std::mutex> lock(mu_);
      --starting_reads_;
      after_read = FinishIfIdleLocked();  // a cancel may have arrived meanwhile
    }
    Run(std::move(after_read));
  }
  if (next.compute >= 0) {
    call_.Consume(payloads_[next.compute],
                  [this](absl::Status status) { OnComputeDone(std::move(status)); });
  }
  if (next.finish) Conclude(std::move(next.status));
}

void ReduceStreamReactor::OnComputeDone(absl::Status status) {
  Next next;
  {
    std::lock_guard<std::mutex> lock(mu_);
    computing_ = false;
    if (!status.ok() && error_.ok()) error_ = std::move(status);
    next = (error_.ok() && !cancelled_) ? ScheduleLocked(-1) : FinishIfIdleLocked();
  }
  Run(std::move(next));
}

}  // namespace gpureduce::server
