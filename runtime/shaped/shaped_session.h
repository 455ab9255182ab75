#pragma once

// The CPU backend's session for an array request (issue 23): the payload's messages, or a
// shared-memory region read a block at a time, handed in order to a ShapedReducer.

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/thread_pool.h"
#include "runtime/backend.h"
#include "runtime/shaped/shaped_reducer.h"

namespace gpureduce::runtime {

class ShapedSession final : public ReduceSession {
 public:
  // spec.layout must be set.
  ShapedSession(ThreadPool& pool, const RequestSpec& spec, std::string device);

  void ConsumePieces(PayloadPieces data, ConsumeDone done) override;
  void ConsumeShared(const SharedSource& source, ConsumeDone done) override;
  void Finish(FinishDone done) override;
  void FinishArrays(ArraysDone done) override;

  BackendTiming timing() const override;
  std::string device_name() const override { return device_; }
  void StartAt(uint64_t index) override { (void)index; }  // never split: indices count from 0
  kernels::KernelId kernel() const override { return kernels::KernelId::kCpu; }

 private:
  // The shared-memory source's blocks from shared_next_ on, one after another.
  void ReadShared();
  void Absorb(const kernels::cpu::ReduceTiming& timing);
  std::byte* Buffer(size_t bytes);

  const std::shared_ptr<const gpureduce::ReduceLayout> layout_;  // the reducer's
  ShapedReducer reducer_;
  const std::string device_;
  const size_t element_bytes_;
  std::vector<uint64_t> buffer_;  // words: aligned for every element size

  SharedSource shared_;
  uint64_t shared_next_ = 0;
  ConsumeDone shared_done_;

  mutable std::mutex mu_;  // timing_ is written on pool threads
  BackendTiming timing_;
};

}  // namespace gpureduce::runtime
