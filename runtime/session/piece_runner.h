#pragma once

// The device half of a session: queues a piece's copy and reduction on the session's stream, and
// reads back how long they took. CudaSession (runtime/cuda/cuda_session.h) runs them on a GPU;
// tests fake it on the CPU.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>

#include "absl/status/status.h"
#include "common/reduction/partial.h"
#include "runtime/backend.h"
#include "runtime/session/completion_queue.h"
#include "runtime/session/piece_input.h"
#include "runtime/session/piece_slot.h"

namespace gpureduce::runtime {

// One piece of a request, as the scheduler queues it.
struct Piece {
  PieceSource source;
  size_t count = 0;
  uint64_t index = 0;  // the request's index of its first element
  bool first = false;  // the request's first piece: its kernel stores the partial, not folds
  gpureduce::Partial* partial = nullptr;  // the request's partial, at the GPU's address
  gpureduce::Stats* stats = nullptr;  // a stats request's running Stats (then partial is unused)
};

class PieceRunner {
 public:
  virtual ~PieceRunner() = default;

  // The stream the session's pieces run on, in order, which other requests may share.
  virtual StreamHandle stream() const = 0;
  // Held while a piece, or a callback after it, is queued: no other request's kernels may land
  // between a reduction and the fold that reads its result from the stream's scratch.
  virtual std::mutex& stream_mutex() = 0;
  // Under stream_mutex(): queues `piece`'s copy (if any) and its reduction into its partial, with
  // the events that time them. `time_copy` false: a piece the kernel reads through the mapping
  // gets no event before its (implicit) copy, and its reads count as kernel time.
  virtual absl::Status QueuePiece(PieceSlot& slot, const Piece& piece, bool time_copy) = 0;
  // After a QueuePiece of `slot` that succeeded: `callback` runs once the piece is done (and
  // after the stream's earlier callbacks), by the event that ends the piece rather than one of
  // its own (a CUDA call fewer). Under stream_mutex().
  virtual void RunAfterPiece(PieceSlot& slot, CompletionQueue::StreamDone callback) = 0;
  // Adds a finished piece's copy and kernel time to `timing`.
  virtual void AddPieceTiming(const PieceSlot& slot, BackendTiming& timing) const = 0;
  // Whether the GPU is done with the piece in `slot`: its status, or nullopt while it runs.
  virtual std::optional<GpuStatus> PollPiece(const PieceSlot& slot) = 0;
  // The error that stopped the stream as a status; `what` names the work it stopped.
  virtual absl::Status StreamError(GpuStatus error, const char* what) const = 0;
};

}  // namespace gpureduce::runtime
