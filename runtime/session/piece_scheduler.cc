#include "runtime/session/piece_scheduler.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/reduction/partial_stats.h"

namespace gpureduce::runtime {
namespace {

std::atomic<uint64_t> next_session_id{1};

// The elements a piece staged through a slot carries: a slot's bytes, or fewer where the kernel
// bounds a launch.
size_t SlotPieceElements(const kernels::WorkBound& bound, size_t slot_floats,
                         size_t element_bytes) {
  const size_t slot_elements = slot_floats * sizeof(float) / element_bytes;
  if (bound.elements_per_launch == 0) return slot_elements;
  return std::min<size_t>(slot_elements, bound.elements_per_launch);
}

}  // namespace

PieceScheduler::PieceScheduler(SessionDevice& device, PieceRunner& runner, const RequestSpec& spec,
                               PartialSlot* partial)
    : device_(device),
      runner_(runner),
      op_(spec.op),
      stats_request_(spec.gathers_stats()),
      partial_(partial),
      // What the client declared, capped (a stream may declare more than it ever sends), or one
      // staging buffer when it declared nothing.
      load_bytes_(spec.size_hint != 0
                      ? std::min<uint64_t>(spec.size_hint, kMostLoadFloats) * DTypeSize(spec.dtype)
                      : device.staging_slot_floats() * sizeof(float)),
      id_(next_session_id.fetch_add(1, std::memory_order_relaxed)),
      bound_(kernels::GetWorkBound(spec.kernel, spec.op)),
      piece_elements_(
          SlotPieceElements(bound_, device.staging_slot_floats(), DTypeSize(spec.dtype))),
      small_request_(spec.one_message &&
                     spec.size_hint * DTypeSize(spec.dtype) <= kInlineStageBytes &&
                     bound_.elements_per_launch == 0),
      device_input_(spec.kernel) {
  device_.AddLoad(load_bytes_);
}

PieceScheduler::~PieceScheduler() { ReleaseDevice(); }

void PieceScheduler::ReleaseDevice() {
  if (partial_ == nullptr) return;
  device_.ReleasePartial(std::exchange(partial_, nullptr));
  device_.RemoveLoad(load_bytes_);
}

void PieceScheduler::ConsumePieces(PayloadPieces data, ConsumeDone done) {
  message_input_.Reset(std::move(data));
  Start(message_input_, std::move(done));
}

void PieceScheduler::ConsumeShared(const SharedSource& source, ConsumeDone done) {
  if (source.kind == SharedSource::Kind::kDevice && source.device == device_.index()) {
    device_input_.Reset(source.device_data, source.count, source.element_bytes);
    Start(device_input_, std::move(done));
  } else if (source.kind == SharedSource::Kind::kHost && source.pinned != nullptr) {
    host_input_.Reset(source.pinned, source.count, source.element_bytes);
    Start(host_input_, std::move(done));
  } else {
    std::move(done)(absl::FailedPreconditionError(
        absl::StrCat("a request on GPU ", device_.index(), " cannot read ",
                     source.kind == SharedSource::Kind::kDevice
                         ? absl::StrCat("memory on GPU ", source.device)
                         : std::string("host memory that was not pinned for it"))));
  }
}

void PieceScheduler::Start(PieceInput& input, ConsumeDone done) {
  input_ = &input;
  staged_ = 0;
  done_ = std::move(done);
  if (input_->count() == 0) {
    EndConsume(absl::OkStatus());
    return;
  }
  AcquireSlot();
}

size_t PieceScheduler::NextPieceElements() const {
  return std::min(input_->MostPieceElements(piece_elements_), input_->count() - staged_);
}

void PieceScheduler::AcquireSlot() {
  wait_started_ = Clock::now();
  // A free slot is taken on this thread (there are no waiters while one is free); else the wait,
  // whose slot may come on the thread of whoever releases one.
  if (PieceSlot* slot = device_.staging().TryAcquire(); slot != nullptr) {
    slot_at_once_ = true;
    OnSlot(slot);
    return;
  }
  slot_at_once_ = false;
  device_.staging().Acquire(id_,
                            [this](absl::StatusOr<PieceSlot*> slot) { OnSlot(std::move(slot)); });
}

void PieceScheduler::OnSlot(absl::StatusOr<PieceSlot*> slot) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    timing_.queue += Clock::now() - wait_started_;
  }
  if (!slot.ok()) {
    EndConsume(slot.status());
    return;
  }
  // A Cancel between NextPiece's check and the wait for this slot found no waiter to wake.
  if (cancelled_.load(std::memory_order_acquire)) {
    device_.staging().Release(*slot);
    EndConsume(CancelledStatus());
    return;
  }
  // A small piece is copied here: the copy costs less than a hand-over would. Shared memory
  // needs no copy by the CPU at all.
  if (!input_->StagesOnCopyThread(NextPieceElements())) {
    AfterPiece(StagePiece(**slot));
    return;
  }
  // The copy into pinned memory runs on a copy thread: this may be a gRPC thread, which should
  // go back to receiving the next chunk at once.
  device_.SubmitCopy([this, slot = *slot] { AfterPiece(StagePiece(*slot)); });
}

absl::Status PieceScheduler::StagePiece(PieceSlot& slot) {
  const size_t count = NextPieceElements();
  if (absl::Status active = device_.Activate(); !active.ok()) {
    device_.ReportError(active);
    device_.staging().Release(&slot);
    return active;
  }
  const PieceSource source = input_->Stage(staged_, count, slot);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++pieces_in_flight_;
    any_piece_ = true;
  }
  // A small request's whole payload, staged on its caller's thread with a slot it got at once:
  // Finish, which follows at once on the same thread, waits for the piece itself. Nothing else
  // of the request has a completion callback, so its callbacks cannot run out of order.
  const bool finish_waits =
      small_request_ && slot_at_once_ && consumed_ == 0 && staged_ + count == input_->count();
  const Piece piece{.source = source,
                    .count = count,
                    .index = index_,
                    .first = consumed_ == 0,
                    .partial = partial_->device,
                    .stats = stats_request_ ? partial_->stats_device : nullptr};
  std::lock_guard<std::mutex> stream_lock(runner_.stream_mutex());
  const absl::Status queued = runner_.QueuePiece(slot, piece, /*time_copy=*/!finish_waits);
  if (!queued.ok()) device_.ReportError(queued);
  auto on_done = [this, &slot](GpuStatus status) { OnPieceDone(&slot, status); };
  if (queued.ok() && finish_waits) {
    unreported_ = &slot;
  } else if (queued.ok()) {
    runner_.RunAfterPiece(slot, std::move(on_done));
  } else {
    // Whatever was queued before the failure may still use the slot: it goes back only after
    // the stream passes, which a new event tells (the piece's own may not have been recorded).
    device_.completions().RunAfter(runner_.stream(), std::move(on_done));
  }
  if (!queued.ok()) return queued;
  staged_ += count;
  consumed_ += count;
  index_ += count;
  return absl::OkStatus();
}

void PieceScheduler::AfterPiece(absl::Status status) {
  if (!status.ok()) {
    EndConsume(std::move(status));
    return;
  }
  // Paced: the next piece, or the end of this Consume (and with it the next chunk's first piece),
  // only once the GPU is done with this one.
  if (paced()) {
    std::unique_lock<std::mutex> lock(mu_);
    if (pieces_in_flight_ > 0) {
      waiting_for_piece_ = true;  // OnPieceDone goes on
      return;
    }
  }
  NextPiece();
}

void PieceScheduler::NextPiece() {
  if (staged_ == input_->count()) {
    EndConsume(absl::OkStatus());
    return;
  }
  if (cancelled_.load(std::memory_order_acquire)) {
    EndConsume(CancelledStatus());
    return;
  }
  absl::Status failed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    failed = error_;  // a piece failed on the GPU: queue no more after it
  }
  if (!failed.ok()) {
    EndConsume(std::move(failed));
    return;
  }
  AcquireSlot();
}

absl::Status PieceScheduler::CancelledStatus() const {
  return absl::CancelledError(
      absl::StrCat("the request was cancelled or its deadline passed; its GPU work stopped after ",
                   consumed_, " elements"));
}

void PieceScheduler::EndConsume(absl::Status status) {
  ConsumeDone done = std::move(done_);  // `done` may start the next Consume
  std::move(done)(std::move(status));
}

PieceScheduler::PieceRecorded PieceScheduler::RecordPiece(const PieceSlot& slot, GpuStatus status) {
  PieceRecorded recorded;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (status != kGpuSuccess) {
      if (error_.ok()) error_ = runner_.StreamError(status, "a staged chunk");
    } else if (device_.Activate().ok()) {
      runner_.AddPieceTiming(slot, timing_);
    }
    if (--pieces_in_flight_ == 0) {
      recorded.go_on = std::exchange(waiting_for_piece_, false);
      recorded.answer = std::exchange(waiting_answer_, std::nullopt);
    }
  }
  if (status != kGpuSuccess) device_.ReportStreamError(status);
  return recorded;
}

void PieceScheduler::OnPieceDone(PieceSlot* slot, GpuStatus status) {
  // A paced Consume waits for this piece; a Finish for the last one.
  PieceRecorded recorded = RecordPiece(*slot, status);
  device_.staging().Release(slot);  // may hand it to a waiting request, here
  if (recorded.go_on) NextPiece();
  // The piece's error, if any, is in error_. Answer's `done` may delete this session: last.
  if (recorded.answer.has_value()) {
    Answer(kGpuSuccess, std::move(recorded.answer->active), std::move(recorded.answer->done));
  }
}

void PieceScheduler::Finish(FinishDone done) {
  // The kernels write the partial into mapped host memory: nothing to copy back, only to wait
  // for the stream to pass this request's work, which the session (and its partial slot) must
  // outlive. No chunk: no kernel wrote it, and the answer is the empty partial.
  absl::Status active = device_.Activate();
  if (!active.ok()) device_.ReportError(active);
  if (unreported_ != nullptr && active.ok() && AnswerInline(active, done)) return;
  if (unreported_ != nullptr) {
    // Its callback answers (below). The slot out of unreported_ first: the lambda's capture
    // must not clear it before the argument that names the slot is read.
    PieceSlot* slot = std::exchange(unreported_, nullptr);
    std::lock_guard<std::mutex> stream_lock(runner_.stream_mutex());
    runner_.RunAfterPiece(*slot, [this, slot](GpuStatus status) { OnPieceDone(slot, status); });
  }
  // Each piece's callback runs once the stream has passed it, in order: with pieces in flight
  // the last one's answers, with no event of the answer's own. With none, a callback may still
  // be finishing on the completion thread (this Finish may even run inside it, from a paced
  // Consume's end): the answer, which may delete this session, goes to that thread, after it.
  // A request that staged no piece had no callback (a piece that failed to queue has one, and
  // counts no elements): it answers here.
  bool any_piece = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pieces_in_flight_ > 0) {
      waiting_answer_ = WaitingAnswer{std::move(active), std::move(done)};
      return;
    }
    any_piece = any_piece_;
  }
  if (!any_piece) {
    Answer(kGpuSuccess, std::move(active), std::move(done));
    return;
  }
  device_.completions().Post([this, active = std::move(active), done = std::move(done)]() mutable {
    Answer(kGpuSuccess, std::move(active), std::move(done));
  });
}

bool PieceScheduler::AnswerInline(const absl::Status& active, FinishDone& done) {
  // A small request's one piece ends within microseconds of its launch: waiting for it here
  // saves the hand-over to the completion thread and back (two thread wake-ups, most of such a
  // request's time). The wait is bounded; past it the completion thread takes over.
  PieceSlot* slot = unreported_;
  const Clock::time_point give_up = Clock::now() + kSmallRequestWait;
  std::optional<GpuStatus> status = runner_.PollPiece(*slot);
  while (!status.has_value() && Clock::now() < give_up) status = runner_.PollPiece(*slot);
  if (!status.has_value()) return false;
  unreported_ = nullptr;
  // The answer first: the slot's release may hand it to a waiting request, whose work should
  // not delay this one's answer. `done` may delete this session: locals only after.
  RecordPiece(*slot, *status);
  SessionDevice& device = device_;
  Answer(*status, active, std::move(done));
  device.staging().Release(slot);
  return true;
}

void PieceScheduler::Answer(GpuStatus status, absl::Status active, FinishDone done) {
  absl::StatusOr<gpureduce::Stats> result = consumed_ == 0 ? gpureduce::Stats{}
                                            : stats_request_
                                                ? *partial_->stats_host
                                                : gpureduce::StatsFromPartial(op_, *partial_->host);
  // The stream has passed this request's work: nothing writes the slot any more. It goes back
  // before the answer does, or the admission slot (freed with the answer) could be reused while
  // this one is still held: "GPU 0 has N requests in progress" at N admitted.
  ReleaseDevice();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!active.ok()) {
      result = std::move(active);
    } else if (status != kGpuSuccess) {
      result = runner_.StreamError(status, "finishing the request");
    } else if (!error_.ok()) {
      result = error_;
    }
  }
  if (status != kGpuSuccess) device_.ReportStreamError(status);
  std::move(done)(std::move(result));
}

BackendTiming PieceScheduler::timing() const {
  std::lock_guard<std::mutex> lock(mu_);
  return timing_;
}

void PieceScheduler::Cancel() {
  cancelled_.store(true, std::memory_order_release);
  device_.staging().Cancel(id_);
}

}  // namespace gpureduce::runtime
