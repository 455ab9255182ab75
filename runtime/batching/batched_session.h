#pragma once

// A small unary request answered from a batch (SmallBatcher): its message's elements are copied
// once and the message released at once; Finish hands them to the batcher and answers with the
// Stats its batch returns, whenever that lands (before or after Finish is called).

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/backend.h"
#include "runtime/batching/small_batcher.h"

namespace gpureduce::runtime {

class BatchedSession final : public ReduceSession {
 public:
  // `batcher` must outlive the session; `device` names it in the response.
  BatchedSession(SmallBatcher& batcher, const RequestSpec& spec, std::string device_name,
                 int device_index);

  void ConsumePieces(PayloadPieces data, ConsumeDone done) override;
  // System shared memory is read into the session (a batched request is small); a CUDA region
  // is not batched (the backend opens its own session for it).
  void ConsumeShared(const SharedSource& source, ConsumeDone done) override;
  void Finish(FinishDone done) override;

  BackendTiming timing() const override;
  std::string device_name() const override { return device_name_; }
  std::vector<int> devices() const override { return {device_index_}; }
  void StartAt(uint64_t index) override { (void)index; }  // never split
  kernels::KernelId kernel() const override { return kernels::KernelId::kSinglePass; }

 private:
  std::byte* Grow(size_t bytes);  // room for `bytes` more

  SmallBatcher& batcher_;
  const gpureduce::DType dtype_;
  const gpureduce::StatsNeeds needs_;
  const std::string device_name_;
  const int device_index_;
  std::vector<uint64_t> words_;  // the elements (words: aligned for every dtype)
  uint64_t bytes_ = 0;

  mutable std::mutex mu_;  // the batch's answer may land on another thread
  BatchTiming batch_timing_;
};

}  // namespace gpureduce::runtime
