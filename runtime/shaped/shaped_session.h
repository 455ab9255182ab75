#pragma once

// A backend's session for an array request (issue 23): the payload's messages, or a
// shared-memory region read a block at a time, handed in order to a ShapedReducer in pieces its
// kernels take (the CPU's: any size; a GPU's: what fits a staging slot).

#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "runtime/backend.h"
#include "runtime/shaped/block_kernels.h"
#include "runtime/shaped/shaped_reducer.h"

namespace gpureduce::runtime {

struct ShapedSessionInfo {
  std::string device;  // the response's device name
  kernels::KernelId kernel = kernels::KernelId::kCpu;
  std::vector<int> devices;  // the GPUs it runs on; empty on the CPU
};

class ShapedSession final : public ReduceSession {
 public:
  // spec.layout must be set.
  ShapedSession(std::unique_ptr<BlockKernels> kernels, const RequestSpec& spec,
                ShapedSessionInfo info);
  ~ShapedSession() override;

  void ConsumePieces(PayloadPieces data, ConsumeDone done) override;
  void ConsumeShared(const SharedSource& source, ConsumeDone done) override;
  void Finish(FinishDone done) override;
  void FinishArrays(ArraysDone done) override;
  void Cancel() override { kernels_->Cancel(); }

  BackendTiming timing() const override;
  std::string device_name() const override { return info_.device; }
  std::vector<int> devices() const override { return info_.devices; }
  void StartAt(uint64_t index) override { (void)index; }  // never split: indices count from 0
  kernels::KernelId kernel() const override { return info_.kernel; }

 private:
  // Reduces pending_ a piece at a time, then the shared source's next block, until both are
  // done or one fails; then the consume's `done`.
  void Pump();
  // The shared source's next block into the buffer, as pending_.
  absl::Status ReadSharedBlock();
  void Absorb(const kernels::cpu::ReduceTiming& timing);
  std::byte* Buffer(size_t bytes);

  const std::unique_ptr<BlockKernels> kernels_;
  const std::shared_ptr<const gpureduce::ReduceLayout> layout_;  // the reducer's
  ShapedReducer reducer_;
  const ShapedSessionInfo info_;
  const size_t element_bytes_;
  const size_t max_piece_bytes_;  // whole elements; 0: any
  std::vector<uint64_t> buffer_;  // words: aligned for every element size

  std::span<const std::byte> pending_;
  SharedSource shared_;  // count 0: none
  uint64_t shared_next_ = 0;
  absl::Status status_;  // the first failure
  ConsumeDone consume_done_;

  mutable std::mutex mu_;  // timing_ is written on the kernels' threads
  BackendTiming timing_;
};

}  // namespace gpureduce::runtime
