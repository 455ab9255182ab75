#include "runtime/cuda/cuda_session.h"

#include <utility>

#include "common/status_macros.h"
#include "runtime/cuda/cuda_status.h"

namespace gpureduce::runtime {
CudaSession::CudaSession(Device& device, const RequestSpec& spec, PartialSlot* partial)
    : device_(device),
      lane_(device.NextLane(spec.kernel)),
      op_(spec.op),
      dtype_(spec.dtype),
      needs_(gpureduce::NeedsOf(spec.ops())),
      kernel_(spec.kernel),
      block_size_(spec.block_size),
      scheduler_(device, *this, spec, partial) {}

absl::StatusOr<std::unique_ptr<CudaSession>> CudaSession::Start(Device& device,
                                                                const RequestSpec& spec,
                                                                PartialSlot* partial) {
  // Nothing to reset: the first chunk's kernel stores its result in the partial. The scheduler
  // counts the request towards the device's load; a session that fails here gives it back.
  std::unique_ptr<CudaSession> session(new CudaSession(device, spec, partial));
  RETURN_IF_ERROR(device.Activate());
  return session;
}

absl::Status CudaSession::QueuePiece(PieceSlot& piece_slot, const Piece& piece, bool time_copy) {
  using Kind = PieceSource::Kind;
  StagingSlot& slot = static_cast<StagingSlot&>(piece_slot);  // the device's pool holds these
  const Kind kind = piece.source.kind;
  const cudaStream_t stream = lane_.stream.get();
  // A shared object's pages need no staging, so nothing but the GPU paces their copies: they run
  // on the lane's copy stream, each overlapping the kernel of the piece before (the kernels stay
  // in order on the lane's stream, each after its own copy).
  const cudaStream_t copy_stream = kind == Kind::kPinnedHost ? lane_.copies.get() : stream;
  const auto* host = reinterpret_cast<const std::byte*>(slot.host);
  const auto* mapped = reinterpret_cast<const std::byte*>(slot.mapped);
  const auto* device = reinterpret_cast<const std::byte*>(slot.device.get());
  const std::byte* copy_from = kind == Kind::kStagedSlot   ? host
                               : kind == Kind::kPinnedHost ? piece.source.data
                                                           : nullptr;
  const std::byte* reduce_from = kind == Kind::kMappedSlot ? mapped
                                 : kind == Kind::kDevice   ? piece.source.data
                                                           : device;
  // A piece the kernel reads from mapped memory counts those reads as its host-to-device time;
  // a small request's (time_copy false) as kernel time: one CUDA call fewer on its short path.
  slot.copy_queued = copy_from != nullptr || (kind != Kind::kDevice && time_copy);
  if (slot.copy_queued) CUDA_RETURN_IF_ERROR(cudaEventRecord(slot.started.get(), copy_stream));
  const size_t count = piece.count;
  if (copy_from != nullptr) {
    CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(slot.device.get(), copy_from,
                                         count * gpureduce::DTypeSize(dtype_),
                                         cudaMemcpyHostToDevice, copy_stream));
  }
  CUDA_RETURN_IF_ERROR(cudaEventRecord(slot.copied.get(), copy_stream));
  if (copy_stream != stream) CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(stream, slot.copied.get()));
  const kernels::cuda::ChunkLaunch launch{
      kernel_, op_, block_size_, device_.traits(), lane_.scratch_layout, stream, piece.first};
  if (piece.stats != nullptr) {
    CUDA_RETURN_IF_ERROR(kernels::cuda::ReduceStatsInto(launch, dtype_, needs_, reduce_from, count,
                                                        piece.index, piece.stats));
  } else {
    CUDA_RETURN_IF_ERROR(kernels::cuda::ReduceInto(
        launch, reinterpret_cast<const float*>(reduce_from), count, piece.index, piece.partial));
  }
  CUDA_RETURN_IF_ERROR(cudaEventRecord(slot.reduced.get(), stream));
  return absl::OkStatus();
}

void CudaSession::RunAfterPiece(PieceSlot& piece_slot, CompletionQueue::StreamDone callback) {
  // QueuePiece recorded `reduced` after the piece's work on the lane's stream (other requests'
  // work may follow it there); the slot records it again only once released, which this
  // callback's owner does after it has run.
  const StagingSlot& slot = static_cast<const StagingSlot&>(piece_slot);
  device_.completions().RunAfterEvent(lane_.stream.get(), slot.reduced.get(), std::move(callback));
}

void CudaSession::AddPieceTiming(const PieceSlot& piece_slot, BackendTiming& timing) const {
  const StagingSlot& slot = static_cast<const StagingSlot&>(piece_slot);
  if (slot.copy_queued) timing.h2d += ElapsedBetween(slot.started, slot.copied);
  timing.kernel += ElapsedBetween(slot.copied, slot.reduced);
}

std::optional<GpuStatus> CudaSession::PollPiece(const PieceSlot& piece_slot) {
  const StagingSlot& slot = static_cast<const StagingSlot&>(piece_slot);
  const cudaError_t status = cudaEventQuery(slot.reduced.get());
  if (status == cudaErrorNotReady) return std::nullopt;
  return status;
}

absl::Status CudaSession::StreamError(GpuStatus error, const char* what) const {
  return CudaError(static_cast<cudaError_t>(error), what, __FILE__, __LINE__);
}

}  // namespace gpureduce::runtime
