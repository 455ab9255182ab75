#pragma once

// The control of one request on one device, with no CUDA in it: the request's input goes to the
// device in pieces of at most one staging slot, each staged (by its input adapter) in a slot the
// scheduler takes from the device's pool, queued on the session's stream (PieceRunner) and given
// back once the stream has passed it. The scheduler owns
// - slots: a free one is taken on the caller's thread, else the request waits in the pool's FIFO
//   (queue time); every slot goes back on every path, after the stream has passed its piece;
// - pacing: a slow kernel's pieces are launches of bounded duration, one in flight, and a Consume
//   ends only when its last piece is done (kernels/work_bound.h);
// - cancellation and deadlines: Cancel ends a wait for a slot at once, and the pieces stop at the
//   next one; a piece that failed on the GPU stops them too;
// - the small-request path: a unary request's one small piece, staged with a slot that was free,
//   is waited for by Finish on its caller's thread, skipping two hand-overs;
// - accounting: queue, copy and kernel time, the device's load and the request's partial slot.
// Control flows AcquireSlot -> OnSlot -> StagePiece -> AfterPiece -> NextPiece (-> AcquireSlot)
// -> EndConsume, with OnPieceDone from the completions; Finish -> Answer, at once or from the
// last piece's OnPieceDone.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/work_bound.h"
#include "runtime/backend.h"
#include "runtime/payload_pieces.h"
#include "runtime/session/device_region_input.h"
#include "runtime/session/host_region_input.h"
#include "runtime/session/message_input.h"
#include "runtime/session/piece_runner.h"
#include "runtime/session/session_device.h"
#include "runtime/shared_memory.h"

namespace gpureduce::runtime {

class PieceScheduler {
 public:
  // Counts the request towards `device`'s load and takes ownership of `partial`: both are given
  // back once Finish has read the partial (before its `done` runs, so a client that sends its
  // next request on the answer finds the slot free), else on destruction.
  PieceScheduler(SessionDevice& device, PieceRunner& runner, const RequestSpec& spec,
                 PartialSlot* partial);
  ~PieceScheduler();
  PieceScheduler(const PieceScheduler&) = delete;
  PieceScheduler& operator=(const PieceScheduler&) = delete;

  // As ReduceSession's (runtime/backend.h).
  void ConsumePieces(PayloadPieces data, ConsumeDone done);
  void ConsumeShared(const SharedSource& source, ConsumeDone done);
  void Finish(FinishDone done);
  BackendTiming timing() const;
  void Cancel();
  // Between Consumes (a copy thread reads index_ only while one is in progress).
  void StartAt(uint64_t index) { index_ = index; }

  // The most one request counts towards its device's load (SessionDevice::AddLoad): 16 GiB.
  static constexpr uint64_t kMostLoadFloats = uint64_t{1} << 32;
  // How long Finish waits on its caller's thread for a small request's piece (its kernel takes
  // 8-18 us on an H100) before the completion thread takes over.
  static constexpr std::chrono::microseconds kSmallRequestWait{100};

 private:
  using Clock = std::chrono::steady_clock;

  void Start(PieceInput& input, ConsumeDone done);
  // Floats in the next piece of the input.
  size_t NextPieceElements() const;
  void AcquireSlot();
  void OnSlot(absl::StatusOr<PieceSlot*> slot);
  absl::Status StagePiece(PieceSlot& slot);  // on the caller's thread or a copy thread
  // After a piece is queued (`status`): the next piece, now or (paced) once the GPU is done
  // with this one, or the end of the Consume.
  void AfterPiece(absl::Status status);
  // The next piece, unless the Consume is complete, the request was cancelled meanwhile or a
  // piece failed on the GPU.
  void NextPiece();
  absl::Status CancelledStatus() const;
  bool paced() const { return bound_.elements_per_launch != 0; }
  void EndConsume(absl::Status status);
  // Gives the partial slot and the device load back (once).
  void ReleaseDevice();
  void OnPieceDone(PieceSlot* slot, GpuStatus status);
  // Finish's answer, given by the last piece's callback where pieces were in flight at Finish.
  struct WaitingAnswer {
    absl::Status active;
    FinishDone done;
  };
  struct PieceRecorded {
    bool go_on = false;                   // a paced Consume waited for this piece to go on
    std::optional<WaitingAnswer> answer;  // a Finish waited for the last piece in flight
  };
  // A piece's timing or error, and what waited for it.
  PieceRecorded RecordPiece(const PieceSlot& slot, GpuStatus status);
  // Finish's wait for a small request's one piece on its own thread: true when it answered.
  bool AnswerInline(const absl::Status& active, FinishDone& done);
  // The request's work is over (`status`): the answer, from its partial.
  void Answer(GpuStatus status, absl::Status active, FinishDone done);

  SessionDevice& device_;
  PieceRunner& runner_;
  const gpureduce::Op op_;     // the op a classic kernel reduces
  const bool stats_request_;   // the stats kernel gathers Stats (RequestSpec::gathers_stats)
  PartialSlot* partial_;       // null once given back
  const uint64_t load_bytes_;  // this request's share of the device's load
  const uint64_t id_;          // the request's waiter id in the staging pool
  const kernels::WorkBound bound_;
  const size_t piece_elements_;  // of a piece staged through a slot
  // One message known to fit one inline piece (and not paced): Finish may wait for it itself.
  const bool small_request_;
  bool slot_at_once_ = false;  // the last slot was free, taken on the caller's thread
  // A small request's queued piece whose callback is Finish's to run. Set by StagePiece and read
  // by Finish, which follows it on the same thread.
  PieceSlot* unreported_ = nullptr;
  std::atomic<bool> cancelled_{false};

  // The inputs, one per kind, and the one the Consume in progress reads (one at a time).
  MessageInput message_input_;
  HostRegionInput host_input_;
  DeviceRegionInput device_input_;
  PieceInput* input_ = &message_input_;
  size_t staged_ = 0;  // floats of the input queued so far
  ConsumeDone done_;
  Clock::time_point wait_started_;
  uint64_t consumed_ = 0;  // elements staged over the whole request
  uint64_t index_ = 0;     // the request's index of the next element staged (StartAt)

  mutable std::mutex mu_;  // timing_, error_ and the pacing state: the completions' too
  BackendTiming timing_;
  absl::Status error_;
  uint32_t pieces_in_flight_ = 0;
  bool any_piece_ = false;          // a piece was staged: its callback may still be finishing
  bool waiting_for_piece_ = false;  // a paced Consume goes on once pieces_in_flight_ is 0
  std::optional<WaitingAnswer> waiting_answer_;  // Finish's, while pieces are in flight
};

}  // namespace gpureduce::runtime
