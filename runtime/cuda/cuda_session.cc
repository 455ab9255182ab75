#include "runtime/cuda/cuda_session.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "runtime/cuda/cuda_status.h"

namespace gpureduce::runtime {
namespace {

std::atomic<uint64_t> next_session_id{1};

size_t PieceFloats(const kernels::WorkBound& bound, size_t slot_floats) {
  if (bound.elements_per_launch == 0) return slot_floats;
  return std::min<size_t>(slot_floats, bound.elements_per_launch);
}

std::chrono::nanoseconds Elapsed(const CudaEvent& from, const CudaEvent& to) {
  float ms = 0;
  if (cudaEventElapsedTime(&ms, from.get(), to.get()) != cudaSuccess) return {};
  return std::chrono::nanoseconds(static_cast<int64_t>(ms * 1e6));
}

}  // namespace

CudaSession::CudaSession(Device& device, const RequestSpec& spec, PartialSlot* partial)
    : device_(device),
      lane_(device.NextLane(spec.kernel)),
      op_(spec.op),
      kernel_(spec.kernel),
      block_size_(spec.block_size),
      partial_(partial),
      // What the client declared, capped (a stream may declare more than it ever sends), or one
      // staging buffer when it declared nothing.
      load_bytes_(spec.size_hint != 0
                      ? std::min<uint64_t>(spec.size_hint, kMostLoadFloats) * sizeof(float)
                      : device.staging_slot_floats() * sizeof(float)),
      id_(next_session_id.fetch_add(1, std::memory_order_relaxed)),
      bound_(kernels::GetWorkBound(spec.kernel, spec.op)),
      piece_floats_(PieceFloats(bound_, device.staging_slot_floats())),
      small_request_(spec.one_message && spec.size_hint <= kInlineStageFloats &&
                     bound_.elements_per_launch == 0) {}

absl::StatusOr<std::unique_ptr<CudaSession>> CudaSession::Start(Device& device,
                                                                const RequestSpec& spec,
                                                                PartialSlot* partial) {
  // Nothing to reset: the first chunk's kernel stores its result in the partial.
  std::unique_ptr<CudaSession> session(new CudaSession(device, spec, partial));
  device.AddLoad(session->load_bytes_);
  RETURN_IF_ERROR(device.Activate());
  return session;
}

CudaSession::~CudaSession() { ReleaseDevice(); }

void CudaSession::ReleaseDevice() {
  if (partial_ == nullptr) return;
  device_.ReleasePartial(std::exchange(partial_, nullptr));
  device_.RemoveLoad(load_bytes_);
}

void CudaSession::ConsumePieces(FloatPieces data, ConsumeDone done) {
  const size_t count = data.count();
  Start(Input{.message = std::move(data), .count = count}, std::move(done));
}

void CudaSession::ConsumeShared(const SharedSource& source, ConsumeDone done) {
  Input input{.count = source.count};
  if (source.kind == SharedSource::Kind::kDevice && source.device == device_.index()) {
    input.device = source.device_data;
  } else if (source.kind == SharedSource::Kind::kHost && source.pinned != nullptr) {
    input.pinned = source.pinned;
  } else {
    std::move(done)(absl::FailedPreconditionError(
        absl::StrCat("a request on GPU ", device_.index(), " cannot read ",
                     source.kind == SharedSource::Kind::kDevice
                         ? absl::StrCat("memory on GPU ", source.device)
                         : std::string("host memory that was not pinned for it"))));
    return;
  }
  Start(std::move(input), std::move(done));
}

void CudaSession::Start(Input&& input, ConsumeDone done) {
  input_ = std::move(input);
  staged_ = 0;
  done_ = std::move(done);
  if (input_.count == 0) {
    EndConsume(absl::OkStatus());
    return;
  }
  AcquireSlot();
}

size_t CudaSession::NextPieceFloats() const {
  const size_t most = input_.device != nullptr && kernel_ == kernels::KernelId::kSinglePass
                          ? kInPlacePieceFloats
                          : piece_floats_;
  return std::min(most, input_.count - staged_);
}

void CudaSession::AcquireSlot() {
  wait_started_ = Clock::now();
  // A free slot is taken on this thread (there are no waiters while one is free); else the wait,
  // whose slot may come on the thread of whoever releases one.
  if (StagingSlot* slot = device_.staging().TryAcquire(); slot != nullptr) {
    slot_at_once_ = true;
    OnSlot(slot);
    return;
  }
  slot_at_once_ = false;
  device_.staging().Acquire(id_,
                            [this](absl::StatusOr<StagingSlot*> slot) { OnSlot(std::move(slot)); });
}

void CudaSession::OnSlot(absl::StatusOr<StagingSlot*> slot) {
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
  if (!input_.from_message() || NextPieceFloats() <= kInlineStageFloats) {
    AfterPiece(StagePiece(**slot));
    return;
  }
  // The copy into pinned memory runs on a copy thread: this may be a gRPC thread, which should
  // go back to receiving the next chunk at once.
  device_.copiers().Submit([this, slot = *slot] { AfterPiece(StagePiece(*slot)); });
}

void CudaSession::AfterPiece(absl::Status status) {
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

void CudaSession::NextPiece() {
  if (staged_ == input_.count) {
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

absl::Status CudaSession::CancelledStatus() const {
  return absl::CancelledError(
      absl::StrCat("the request was cancelled or its deadline passed; its GPU work stopped after ",
                   consumed_, " elements"));
}

void CudaSession::EndConsume(absl::Status status) {
  ConsumeDone done = std::move(done_);  // `done` may start the next Consume
  std::move(done)(std::move(status));
}

absl::Status CudaSession::StagePiece(StagingSlot& slot) {
  const size_t count = NextPieceFloats();
  if (absl::Status active = device_.Activate(); !active.ok()) {
    device_.ReportError(active);
    device_.staging().Release(&slot);
    return active;
  }
  const float* copy_from = nullptr;
  const float* reduce_from = slot.device.get();
  if (input_.from_message()) {
    input_.message.CopyFloats(staged_, count, slot.host.get());
    // A small piece is read by the kernel straight from the pinned buffer, which the GPU maps:
    // a copy to the device would cost more latency than the reads across PCIe.
    if (count <= kInlineStageFloats) {
      reduce_from = slot.mapped;
    } else {
      copy_from = slot.host.get();
    }
  } else if (input_.pinned != nullptr) {
    copy_from = input_.pinned + staged_;
  } else {
    reduce_from = input_.device + staged_;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++pieces_in_flight_;
  }
  // A small request's whole payload, staged on its caller's thread with a slot it got at once:
  // Finish, which follows at once on the same thread, waits for the piece itself. Nothing else
  // of the request has a completion callback, so its callbacks cannot run out of order.
  const bool finish_waits =
      small_request_ && slot_at_once_ && consumed_ == 0 && staged_ + count == input_.count;
  std::lock_guard<std::mutex> lane_lock(lane_.mu);
  const absl::Status queued =
      QueuePiece(slot, count, copy_from, reduce_from, /*time_copy=*/!finish_waits);
  if (!queued.ok()) device_.ReportError(queued);
  if (queued.ok() && finish_waits) {
    unreported_ = &slot;
  } else {
    // Whatever was queued may still use the slot: it goes back only after the stream passes.
    device_.completions().RunAfter(
        lane_.stream.get(), [this, &slot](cudaError_t status) { OnPieceDone(&slot, status); });
  }
  if (!queued.ok()) return queued;
  staged_ += count;
  consumed_ += count;
  index_ += count;
  return absl::OkStatus();
}

absl::Status CudaSession::QueuePiece(StagingSlot& slot, size_t count, const float* copy_from,
                                     const float* reduce_from, bool time_copy) {
  const cudaStream_t stream = lane_.stream.get();
  // A shared object's pages need no staging, so nothing but the GPU paces their copies: they run
  // on the lane's copy stream, each overlapping the kernel of the piece before (the kernels stay
  // in order on the lane's stream, each after its own copy).
  const cudaStream_t copy_stream = input_.pinned != nullptr ? lane_.copies.get() : stream;
  // A piece the kernel reads from mapped memory counts those reads as its host-to-device time;
  // a small request's (time_copy false) as kernel time: one CUDA call fewer on its short path.
  slot.copy_queued = copy_from != nullptr || (input_.device == nullptr && time_copy);
  if (slot.copy_queued) CUDA_RETURN_IF_ERROR(cudaEventRecord(slot.started.get(), copy_stream));
  if (copy_from != nullptr) {
    CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(slot.device.get(), copy_from, count * sizeof(float),
                                         cudaMemcpyHostToDevice, copy_stream));
  }
  CUDA_RETURN_IF_ERROR(cudaEventRecord(slot.copied.get(), copy_stream));
  if (copy_stream != stream) CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(stream, slot.copied.get()));
  const kernels::cuda::ChunkLaunch launch{kernel_,
                                          op_,
                                          block_size_,
                                          device_.traits(),
                                          lane_.scratch_layout,
                                          stream,
                                          /*first=*/consumed_ == 0};
  CUDA_RETURN_IF_ERROR(
      kernels::cuda::ReduceInto(launch, reduce_from, count, index_, partial_->device));
  CUDA_RETURN_IF_ERROR(cudaEventRecord(slot.reduced.get(), stream));
  return absl::OkStatus();
}

bool CudaSession::RecordPiece(const StagingSlot& slot, cudaError_t status) {
  bool go_on = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (status != cudaSuccess) {
      if (error_.ok()) error_ = CudaError(status, "a staged chunk", __FILE__, __LINE__);
    } else if (device_.Activate().ok()) {
      if (slot.copy_queued) timing_.h2d += Elapsed(slot.started, slot.copied);
      timing_.kernel += Elapsed(slot.copied, slot.reduced);
    }
    go_on = --pieces_in_flight_ == 0 && std::exchange(waiting_for_piece_, false);
  }
  if (status != cudaSuccess) device_.ReportError(status);
  return go_on;
}

void CudaSession::OnPieceDone(StagingSlot* slot, cudaError_t status) {
  const bool go_on = RecordPiece(*slot, status);  // a paced Consume waits for this piece
  device_.staging().Release(slot);                // may hand it to a waiting request, here
  if (go_on) NextPiece();
}

void CudaSession::Finish(FinishDone done) {
  // The kernels write the partial into mapped host memory: nothing to copy back, only to wait
  // for the stream to pass this request's work, which the session (and its partial slot) must
  // outlive. No chunk: no kernel wrote it, and the answer is the empty partial.
  absl::Status active = device_.Activate();
  if (!active.ok()) device_.ReportError(active);
  if (unreported_ != nullptr && active.ok()) {
    // A small request's one piece ends within microseconds of its launch: waiting for it here
    // saves the hand-over to the completion thread and back (two thread wake-ups, most of such a
    // request's time). The wait is bounded; past it the completion thread takes over.
    StagingSlot* slot = unreported_;
    const Clock::time_point give_up = Clock::now() + kSmallRequestWait;
    cudaError_t status = cudaEventQuery(slot->reduced.get());
    while (status == cudaErrorNotReady && Clock::now() < give_up) {
      status = cudaEventQuery(slot->reduced.get());
    }
    if (status != cudaErrorNotReady) {
      unreported_ = nullptr;
      // The answer first: the slot's release may hand it to a waiting request, whose work
      // should not delay this one's answer. `done` may delete this session: locals only after.
      RecordPiece(*slot, status);
      Device& device = device_;
      Answer(status, std::move(active), std::move(done));
      device.staging().Release(slot);
      return;
    }
  }
  std::lock_guard<std::mutex> lane_lock(lane_.mu);
  if (unreported_ != nullptr) {  // its callback goes before the answer's
    device_.completions().RunAfter(
        lane_.stream.get(), [this, slot = std::exchange(unreported_, nullptr)](cudaError_t status) {
          OnPieceDone(slot, status);
        });
  }
  device_.completions().RunAfter(
      lane_.stream.get(),
      [this, active = std::move(active), done = std::move(done)](cudaError_t status) mutable {
        Answer(status, std::move(active), std::move(done));
      });
}

void CudaSession::Answer(cudaError_t status, absl::Status active, FinishDone done) {
  absl::StatusOr<kernels::Partial> result = consumed_ == 0 ? kernels::Partial{} : *partial_->host;
  // The stream has passed this request's work: nothing writes the slot any more. It goes back
  // before the answer does, or the admission slot (freed with the answer) could be reused while
  // this one is still held: "GPU 0 has N requests in progress" at N admitted.
  ReleaseDevice();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!active.ok()) {
      result = std::move(active);
    } else if (status != cudaSuccess) {
      result = CudaError(status, "finishing the request", __FILE__, __LINE__);
    } else if (!error_.ok()) {
      result = error_;
    }
  }
  if (status != cudaSuccess) device_.ReportError(status);
  std::move(done)(std::move(result));
}

BackendTiming CudaSession::timing() const {
  std::lock_guard<std::mutex> lock(mu_);
  return timing_;
}

void CudaSession::Cancel() {
  cancelled_.store(true, std::memory_order_release);
  device_.staging().Cancel(id_);
}

}  // namespace gpureduce::runtime
