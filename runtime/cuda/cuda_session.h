#pragma once

// One request on one GPU. Each piece of a chunk (at most one staging slot) is copied once from
// the gRPC message into pinned memory, on one of the device's copy threads, sent to the device
// asynchronously and reduced into the request's device partial, all in order on one stream; the
// chunk is released as soon as it is staged, so gRPC receives the next chunk while the GPU works.
// Shared memory skips the staging copy: system memory is copied from its pinned pages straight
// to the device, device memory is reduced where it is. Finish copies the partial back.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "kernels/work_bound.h"
#include "runtime/backend.h"
#include "runtime/cuda/device.h"

namespace gpureduce::runtime {

class CudaSession final : public ReduceSession {
 public:
  // Takes ownership of `partial`: released once Finish has read it (before its `done` runs, so
  // a client that sends its next request on the answer finds the slot free), else on
  // destruction.
  static absl::StatusOr<std::unique_ptr<CudaSession>> Start(Device& device, const RequestSpec& spec,
                                                            PartialSlot* partial);
  ~CudaSession() override;

  void ConsumePieces(FloatPieces data, ConsumeDone done) override;
  void ConsumeShared(const SharedSource& source, ConsumeDone done) override;
  void Finish(FinishDone done) override;
  BackendTiming timing() const override;
  void Cancel() override;
  std::string device_name() const override { return device_.description().name; }
  std::vector<int> devices() const override { return {device_.index()}; }
  // Between Consumes (the staging thread reads index_ only while one is in progress).
  void StartAt(uint64_t index) override { index_ = index; }
  kernels::KernelId kernel() const override { return kernel_; }

 private:
  using Clock = std::chrono::steady_clock;
  // A last piece this small (64 KiB) is staged on the thread that got the slot, and read by the
  // kernel from pinned host memory without a copy to the device.
  static constexpr size_t kInlineStageFloats = 16 * 1024;
  // single_pass reduces device memory in place in launches of up to 1 GiB (its scratch does not
  // grow with the input); the other kernels' scratch is sized for one staging slot.
  static constexpr size_t kInPlacePieceFloats = size_t{1} << 28;
  // The most one request counts towards its device's load (Device::AddLoad): 16 GiB.
  static constexpr uint64_t kMostLoadFloats = uint64_t{1} << 32;
  // How long Finish waits on its caller's thread for a small request's piece (its kernel takes
  // 8-18 us on an H100) before the completion thread takes over.
  static constexpr std::chrono::microseconds kSmallRequestWait{100};

  // What the Consume in progress reads: floats in gRPC memory (`message`, staged through pinned
  // memory), a shared object's pinned pages (`pinned`, copied straight to the device) or device
  // memory (`device`, reduced in place); `pinned` and `device` are null for a message.
  struct Input {
    FloatPieces message;
    const float* pinned = nullptr;
    const float* device = nullptr;
    size_t count = 0;
    bool from_message() const { return pinned == nullptr && device == nullptr; }
  };

  CudaSession(Device& device, const RequestSpec& spec, PartialSlot* partial);
  void Start(Input&& input, ConsumeDone done);
  // Floats in the next piece of the input.
  size_t NextPieceFloats() const;
  void AcquireSlot();
  void OnSlot(absl::StatusOr<StagingSlot*> slot);
  absl::Status StagePiece(StagingSlot& slot);  // on a copy thread
  // Under the lane's lock: copies `count` floats from `copy_from` into the slot's device buffer
  // (none when null), then reduces them at `reduce_from`. `time_copy` false: a kernel reading
  // mapped memory gets no event before its (implicit) copy.
  absl::Status QueuePiece(StagingSlot& slot, size_t count, const float* copy_from,
                          const float* reduce_from, bool time_copy);
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
  void OnPieceDone(StagingSlot* slot, cudaError_t status);
  // A piece's timing or error; true when a paced Consume waits for it to go on.
  bool RecordPiece(const StagingSlot& slot, cudaError_t status);
  // The request's work is over (`status`): the answer, from its partial.
  void Answer(cudaError_t status, absl::Status active, FinishDone done);

  Device& device_;
  Device::Lane& lane_;
  const kernels::Op op_;
  const kernels::KernelId kernel_;
  const uint32_t block_size_;
  PartialSlot* partial_;       // null once given back
  const uint64_t load_bytes_;  // this request's share of the device's load (Device::AddLoad)
  const uint64_t id_;
  // A slow kernel's pieces are launches of bounded duration, one in flight (a chunk ends only
  // when its last piece is done), with a cancellation check between them
  // (kernels/work_bound.h).
  const kernels::WorkBound bound_;
  const size_t piece_floats_;
  // One message known to fit one inline piece (and not paced): Finish may wait for it itself.
  const bool small_request_;
  bool slot_at_once_ = false;  // the last slot was free, taken on the caller's thread
  // A small request's queued piece whose callback is Finish's to run. Set by StagePiece and read
  // by Finish, which follows it on the same thread.
  StagingSlot* unreported_ = nullptr;
  std::atomic<bool> cancelled_{false};

  // The Consume in progress (one at a time).
  Input input_;
  size_t staged_ = 0;
  ConsumeDone done_;
  Clock::time_point wait_started_;
  uint64_t consumed_ = 0;  // elements staged over the whole request
  uint64_t index_ = 0;     // the request's index of the next element staged (StartAt)

  mutable std::mutex mu_;  // timing_, error_ and the pacing state: the completion thread's too
  BackendTiming timing_;
  absl::Status error_;
  uint32_t pieces_in_flight_ = 0;
  bool waiting_for_piece_ = false;  // a paced Consume goes on once pieces_in_flight_ is 0
};

}  // namespace gpureduce::runtime
