#include "tests/unit/runtime/fake_gpu.h"

#include <algorithm>
#include <cstdlib>
#include <span>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/reduction/partial.h"
#include "gtest/gtest.h"

namespace gpureduce::runtime {

void FakeGpu::RunAfter(StreamHandle stream, StreamDone callback) {
  // A callback on another stream would not wait for this one's pieces.
  if (stream != this->stream()) std::abort();
  work_.push_back(Work{.callback = std::move(callback)});
}

void FakeGpu::Post(absl::AnyInvocable<void() &&> callback) {
  work_.push_back(Work{
      .callback = [callback = std::move(callback)](GpuStatus) mutable { std::move(callback)(); }});
}

void FakeGpu::RunAfterPiece(PieceSlot& slot, StreamDone callback) {
  // Only after the slot's piece was queued (as the CUDA session reads the slot's own event).
  const auto state = slots_.find(&slot);
  if (state == slots_.end() || !state->second.queued) {
    ADD_FAILURE() << "RunAfterPiece on a slot with no piece queued";
  }
  ++callbacks_by_piece_;
  RunAfter(stream(), std::move(callback));
}

absl::Status FakeGpu::QueuePiece(PieceSlot& slot, const Piece& piece, bool time_copy) {
  if (!queue_error_.ok()) {
    slots_[&slot] = SlotState{.queued = false, .done = true};  // nothing to time
    return std::exchange(queue_error_, absl::OkStatus());
  }
  const QueuedPiece queued{piece, time_copy};
  pieces_.push_back(queued);
  work_.push_back(Work{.piece = queued, .slot = &slot});
  slots_[&slot] = SlotState{.time_copy = time_copy};
  most_in_flight_ = std::max(most_in_flight_, ++in_flight_);
  return absl::OkStatus();
}

void FakeGpu::AddPieceTiming(const PieceSlot& slot, BackendTiming& timing) const {
  const SlotState& state = slots_.at(&slot);
  if (!state.queued) return;
  if (state.time_copy) timing.h2d += kCopyTime;
  timing.kernel += kKernelTime;
}

std::optional<GpuStatus> FakeGpu::PollPiece(const PieceSlot& slot) {
  if (done_when_polled_) RunPieces();
  const SlotState& state = slots_.at(&slot);
  if (!state.done) return std::nullopt;
  return state.status;
}

absl::Status FakeGpu::StreamError(GpuStatus error, const char* what) const {
  return absl::InternalError(absl::StrCat("fake stream error ", error, " in ", what));
}

bool FakeGpu::RunNext() {
  if (work_.empty()) return false;
  Work work = std::move(work_.front());
  work_.pop_front();
  if (!work.piece.has_value()) {
    std::move(work.callback)(stream_status_);
    return true;
  }
  --in_flight_;
  if (stream_status_ == kGpuSuccess) stream_status_ = std::exchange(fail_next_, kGpuSuccess);
  if (stream_status_ == kGpuSuccess) Reduce(*work.piece, *work.slot);
  SlotState& state = slots_[work.slot];
  state.done = true;
  state.status = stream_status_;
  return true;
}

void FakeGpu::RunAll() {
  while (RunNext()) {
  }
}

void FakeGpu::RunPieces() {
  while (!work_.empty() && work_.front().piece.has_value()) RunNext();
}

size_t FakeGpu::queued_callbacks() const {
  return std::count_if(work_.begin(), work_.end(),
                       [](const Work& work) { return !work.piece.has_value(); });
}

void FakeGpu::Reduce(const QueuedPiece& queued, const PieceSlot& slot) const {
  const Piece& piece = queued.piece;
  const bool in_slot = piece.source.kind == PieceSource::Kind::kMappedSlot ||
                       piece.source.kind == PieceSource::Kind::kStagedSlot;
  const float* first = in_slot ? slot.host : reinterpret_cast<const float*>(piece.source.data);
  const std::span<const float> floats(first, piece.count);
  const bool indexed = op_ == gpureduce::Op::kArgMin || op_ == gpureduce::Op::kArgMax;
  gpureduce::Partial sum;
  for (size_t i = 0; i < floats.size(); ++i) {
    const double x = floats[i];
    const gpureduce::Partial element{.value = op_ == gpureduce::Op::kSumSquares ? x * x : x,
                                     .index = indexed ? int64_t(piece.index + i) : -1,
                                     .count = 1};
    sum = gpureduce::Combine(op_, sum, element);
  }
  *piece.partial = piece.first ? sum : gpureduce::Combine(op_, *piece.partial, sum);
}

}  // namespace gpureduce::runtime
