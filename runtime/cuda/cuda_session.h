#pragma once

// One request on one GPU. Its control (slots, pacing, cancellation, the small-request path,
// accounting) is a PieceScheduler's (runtime/session/piece_scheduler.h); this is its GPU half.
// Each piece of a chunk (at most one staging slot) is copied once from the gRPC message into
// pinned memory, sent to the device asynchronously and reduced into the request's device partial,
// all in order on one stream; the chunk is released as soon as it is staged, so gRPC receives the
// next chunk while the GPU works. Shared memory skips the staging copy: system memory is copied
// from its pinned pages straight to the device, device memory is reduced where it is. Finish
// waits for the stream; the partial is in mapped memory.

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/backend.h"
#include "runtime/cuda/device.h"
#include "runtime/session/piece_runner.h"
#include "runtime/session/piece_scheduler.h"

namespace gpureduce::runtime {

class CudaSession final : public ReduceSession, private PieceRunner {
 public:
  // Takes ownership of `partial`: released once Finish has read it (before its `done` runs, so
  // a client that sends its next request on the answer finds the slot free), else on
  // destruction.
  static absl::StatusOr<std::unique_ptr<CudaSession>> Start(Device& device, const RequestSpec& spec,
                                                            PartialSlot* partial);

  void ConsumePieces(PayloadPieces data, ConsumeDone done) override {
    scheduler_.ConsumePieces(std::move(data), std::move(done));
  }
  void ConsumeShared(const SharedSource& source, ConsumeDone done) override {
    scheduler_.ConsumeShared(source, std::move(done));
  }
  void Finish(FinishDone done) override { scheduler_.Finish(std::move(done)); }
  BackendTiming timing() const override { return scheduler_.timing(); }
  void Cancel() override { scheduler_.Cancel(); }
  std::string device_name() const override { return device_.description().name; }
  std::vector<int> devices() const override { return {device_.index()}; }
  void StartAt(uint64_t index) override { scheduler_.StartAt(index); }
  kernels::KernelId kernel() const override { return kernel_; }

 private:
  CudaSession(Device& device, const RequestSpec& spec, PartialSlot* partial);

  // PieceRunner: the lane's stream, CUDA events and the kernels.
  StreamHandle stream() const override { return lane_.stream.get(); }
  std::mutex& stream_mutex() override { return lane_.mu; }
  absl::Status QueuePiece(PieceSlot& slot, const Piece& piece, bool time_copy) override;
  void RunAfterPiece(PieceSlot& slot, CompletionQueue::StreamDone callback) override;
  void AddPieceTiming(const PieceSlot& slot, BackendTiming& timing) const override;
  std::optional<GpuStatus> PollPiece(const PieceSlot& slot) override;
  absl::Status StreamError(GpuStatus error, const char* what) const override;

  Device& device_;
  Device::Lane& lane_;
  const gpureduce::Op op_;
  const gpureduce::DType dtype_;
  const gpureduce::StatsNeeds needs_;  // what the stats kernel gathers for a stats request
  const kernels::KernelId kernel_;
  const uint32_t block_size_;
  PieceScheduler scheduler_;  // last: it uses the members above, and is destroyed first
};

}  // namespace gpureduce::runtime
