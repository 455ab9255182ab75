#include "server/stream_flow.h"

#include <utility>

namespace gpureduce::server {

StreamFlow::Step StreamFlow::ChunkReceived(bool has_data) {
  has_data_[read_buffer_] = has_data;
  return Schedule(read_buffer_);
}

StreamFlow::Step StreamFlow::ReadsEnded(bool cancelled) {
  reads_done_ = true;
  if (cancelled) cancelled_ = true;
  return FinishIfIdle();
}

StreamFlow::Step StreamFlow::Failed(absl::Status status) {
  if (error_.ok()) error_ = std::move(status);
  return FinishIfIdle();
}

StreamFlow::Step StreamFlow::Cancelled() {
  cancelled_ = true;
  return FinishIfIdle();
}

StreamFlow::Step StreamFlow::ComputeDone(absl::Status status) {
  computing_ = false;
  if (!status.ok() && error_.ok()) error_ = std::move(status);
  return (error_.ok() && !cancelled_) ? Schedule(-1) : FinishIfIdle();
}

StreamFlow::Step StreamFlow::ReadStarted() {
  --starting_reads_;
  return FinishIfIdle();  // a cancel may have arrived meanwhile
}

StreamFlow::Step StreamFlow::Schedule(int received) {
  int pending = received;
  if (received >= 0 && computing_) {
    waiting_ = received;  // both buffers are busy: no read until the backend frees one
    return Step{};
  }
  if (received < 0) {
    pending = waiting_;
    waiting_ = -1;
  }
  if (pending < 0) return FinishIfIdle();  // a read is in flight, or the stream is over

  Step step;
  if (has_data_[pending]) {
    computing_ = true;
    step.compute = pending;
  }
  read_buffer_ = 1 - pending;  // the other buffer is free: the backend finished with it
  step.read = read_buffer_;
  ++starting_reads_;
  return step;
}

StreamFlow::Step StreamFlow::FinishIfIdle() {
  Step step;
  // The backend may still hold a buffer, or another thread may be about to call StartRead;
  // finishing now would let gRPC delete the reactor under them.
  if (finished_ || computing_ || starting_reads_ > 0) return step;
  const bool stream_over = reads_done_ && waiting_ < 0;
  if (error_.ok() && !cancelled_ && !stream_over) return step;
  finished_ = true;
  step.finish = true;
  step.status = error_;
  if (step.status.ok() && cancelled_) {
    step.status = absl::CancelledError("the call was cancelled or its deadline passed");
  }
  return step;
}

}  // namespace gpureduce::server
