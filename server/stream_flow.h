#pragma once

// ReduceStream's decisions, apart from gRPC: which of the two message buffers to read the next
// chunk into, which to hand to the backend, and when the call may finish. While the backend
// reduces one chunk, gRPC receives the next into the other buffer; a chunk that arrives while
// the backend is busy waits, and no further read starts until a buffer is free. That
// back-pressure bounds a stream's memory to two messages.
//
// Not thread-safe: the reactor calls it under its mutex and carries out the returned Step after
// releasing it, since gRPC and the backend may call back into the reactor from other threads.

#include "absl/status/status.h"

namespace gpureduce::server {

class StreamFlow {
 public:
  // What to do next, in this order: start a read, hand a buffer to the backend, finish.
  struct Step {
    int read = -1;     // buffer to read the next message into
    int compute = -1;  // buffer to hand to the backend
    bool finish = false;
    absl::Status status;  // with `finish`
  };

  // The first read, started before any event, lands in this buffer.
  static constexpr int kFirstRead = 0;

  // The read in flight landed a valid chunk in read_buffer(); `has_data` says whether it carries
  // elements (an empty chunk is not handed to the backend).
  Step ChunkReceived(bool has_data);
  // The read in flight ended without a message: the client half-closed, or the call broke
  // (`cancelled`).
  Step ReadsEnded(bool cancelled);
  // The chunk just received was refused (a bad spec or payload); the call finishes with `status`
  // once nothing is in flight.
  Step Failed(absl::Status status);
  // gRPC cancelled the call (or its deadline passed).
  Step Cancelled();
  // The backend is done with the buffer it was given.
  Step ComputeDone(absl::Status status);
  // The StartRead a Step asked for has returned.
  Step ReadStarted();

  int read_buffer() const { return read_buffer_; }
  bool finished() const { return finished_; }

 private:
  Step Schedule(int received);  // a chunk in `received` (or -1: the waiting one) may compute
  Step FinishIfIdle();

  bool has_data_[2] = {false, false};
  bool computing_ = false;
  int starting_reads_ = 0;        // reads decided on whose StartRead has not returned yet
  int waiting_ = -1;              // a received chunk waiting for the backend
  int read_buffer_ = kFirstRead;  // where the read in flight lands
  bool reads_done_ = false;       // the client half-closed, or the call broke
  bool cancelled_ = false;
  bool finished_ = false;
  absl::Status error_;
};

}  // namespace gpureduce::server
