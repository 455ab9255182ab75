#pragma once

// One GPU stream on the CPU, for the tests of a session's scheduler: it is the scheduler's
// PieceRunner and its device's CompletionQueue. Pieces and callbacks queue in order, as on a CUDA
// stream, and run only when the test says (RunNext, RunAll), so a test sees every state in
// between. A piece reduces its floats when it runs, reading them from the slot then (as the
// kernel would): a slot reused too early shows as a wrong result. A failed piece stops the
// stream: every later callback gets its error, as a CUDA stream's would.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "common/reduction/op.h"
#include "runtime/session/completion_queue.h"
#include "runtime/session/piece_runner.h"

namespace gpureduce::runtime {

class FakeGpu final : public CompletionQueue, public PieceRunner {
 public:
  // Per piece, the copy time it reports when its copy was timed, and its kernel time.
  static constexpr std::chrono::nanoseconds kCopyTime{1000};
  static constexpr std::chrono::nanoseconds kKernelTime{2000};

  struct QueuedPiece {
    Piece piece;
    bool time_copy = false;
  };

  explicit FakeGpu(gpureduce::Op op) : op_(op) {}

  // CompletionQueue
  void RunAfter(StreamHandle stream, StreamDone callback) override;
  void Post(absl::AnyInvocable<void() &&> callback) override;

  // PieceRunner
  StreamHandle stream() const override { return reinterpret_cast<StreamHandle>(kStreamId); }
  std::mutex& stream_mutex() override { return mu_; }
  absl::Status QueuePiece(PieceSlot& slot, const Piece& piece, bool time_copy) override;
  // The slot's piece is the last thing queued: a callback after it is the same as RunAfter's.
  void RunAfterPiece(PieceSlot& slot, StreamDone callback) override;
  void AddPieceTiming(const PieceSlot& slot, BackendTiming& timing) const override;
  std::optional<GpuStatus> PollPiece(const PieceSlot& slot) override;
  absl::Status StreamError(GpuStatus error, const char* what) const override;

  // Runs the oldest queued work (a piece or a callback); false when nothing is queued.
  bool RunNext();
  // Runs queued work until none is left, also what the callbacks queue meanwhile.
  void RunAll();
  size_t queued() const { return work_.size(); }
  size_t queued_callbacks() const;
  // The most pieces queued and not yet run at any one time.
  size_t most_pieces_in_flight() const { return most_in_flight_; }

  // The next piece to run fails with `error`, and with it the stream.
  void FailNextPiece(GpuStatus error) { fail_next_ = error; }
  // The next QueuePiece returns `status` (after queuing nothing).
  void FailNextQueue(absl::Status status) { queue_error_ = std::move(status); }
  // A fast GPU: PollPiece first runs the queued pieces that come before any callback.
  void set_done_when_polled(bool done) { done_when_polled_ = done; }

  // Callbacks queued by RunAfterPiece rather than RunAfter.
  size_t callbacks_by_piece() const { return callbacks_by_piece_; }
  // Every piece queued, in order.
  const std::vector<QueuedPiece>& pieces() const { return pieces_; }

 private:
  // Where the last piece queued on `slot` stands: done, and with what.
  struct SlotState {
    bool queued = true;
    bool time_copy = false;
    bool done = false;
    GpuStatus status = kGpuSuccess;
  };
  struct Work {
    std::optional<QueuedPiece> piece;  // else `callback`
    PieceSlot* slot = nullptr;
    StreamDone callback;
  };
  void Reduce(const QueuedPiece& queued, const PieceSlot& slot) const;
  // Runs the front of the queue while it is a piece.
  void RunPieces();

  const gpureduce::Op op_;
  static constexpr uintptr_t kStreamId = 0x5157;  // any address: only its identity matters
  std::mutex mu_;
  std::deque<Work> work_;
  std::vector<QueuedPiece> pieces_;
  std::map<const PieceSlot*, SlotState> slots_;
  size_t in_flight_ = 0;
  size_t most_in_flight_ = 0;
  size_t callbacks_by_piece_ = 0;
  GpuStatus stream_status_ = kGpuSuccess;
  GpuStatus fail_next_ = kGpuSuccess;
  absl::Status queue_error_;
  bool done_when_polled_ = false;
};

}  // namespace gpureduce::runtime
