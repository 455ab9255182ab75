#pragma once

// A GPU's BlockKernels (runtime/shaped/block_kernels.h) for array requests (issue 23): each call
// takes one of the device's staging slots, copies its piece (and the segments' bounds) into the
// pinned half, sends it to the device and runs kernels/cuda/segmented/segmented_stats.h, whose
// Stats come back into the slot, all on one of the device's lanes. The slot is the call's only
// memory, so the device's staging pool bounds array requests as it bounds the others; the host
// work (staging, reading the Stats back) runs on the device's copy threads, the waits on its
// completion thread, except for small steps (a batch of small requests): those run where they
// are asked, as one launch that reads the slot's pinned half through the GPU's mapping.

#include <atomic>
#include <cstdint>
#include <vector>

#include "runtime/cuda/device.h"
#include "runtime/shaped/block_kernels.h"

namespace gpureduce::runtime {

class CudaBlockKernels final : public BlockKernels {
 public:
  // Counts `load_bytes` towards the device's load while it lives.
  CudaBlockKernels(Device& device, uint64_t load_bytes);
  ~CudaBlockKernels() override;

  uint64_t max_piece_bytes() const override { return max_piece_bytes_; }
  uint64_t max_segments() const override { return max_segments_; }
  uint64_t max_direct_row(gpureduce::DType) const override { return 0; }

  void Segments(const kernels::cpu::StatsRequest& request, std::span<const std::byte> data,
                std::span<const uint64_t> bounds, SegmentsDone done) override;
  void Columns(const kernels::cpu::StatsRequest& request, std::span<const std::byte> data,
               uint64_t rows, std::span<gpureduce::Stats> columns, uint64_t base_row,
               ColumnsDone done) override;
  void Rows(const kernels::cpu::StatsRequest& request, std::span<const std::byte> data,
            uint64_t length, kernels::cpu::RowSink sink, kernels::cpu::DirectAnswers direct,
            RowsDone done) override;
  // A step waiting for a staging slot, and every later one, ends with CANCELLED.
  void Cancel() override;

 private:
  // Queues a step's copies and kernels on the lane's stream.
  using Enqueue = absl::AnyInvocable<absl::Status(StagingSlot& slot, cudaStream_t stream) &&>;
  using Fetched =
      absl::AnyInvocable<void(absl::StatusOr<std::vector<gpureduce::Stats>>, Timing) &&>;

  // One step: a slot, `enqueue`; once the GPU is done, the `count` Stats the step left at byte
  // `stats_at` of the slot's host half (or the step's first failure) to `fetched`, with the slot
  // back in the pool. A `small` step takes a free slot on this thread and waits for its kernel
  // here (bounded), answering here too; else the enqueue runs on a copy thread and the answer
  // comes on one.
  void Run(Enqueue enqueue, uint64_t stats_at, uint64_t count, bool small, Fetched fetched);
  // The step on `slot`, enqueued on this thread.
  void RunStep(StagingSlot& slot, Timing timing, Enqueue enqueue, uint64_t stats_at, uint64_t count,
               bool small, Fetched fetched);
  // Its Stats read (or its failure), the slot released, `fetched` called.
  void Land(StagingSlot& slot, cudaError_t stream_status, absl::Status status, Timing timing,
            uint64_t stats_at, uint64_t count, bool small, Fetched fetched);
  // Columns [first, columns.size()) of the table, a slot's worth at a time.
  void ColumnsFrom(const kernels::cpu::StatsRequest& request, std::span<const std::byte> data,
                   uint64_t rows, std::span<gpureduce::Stats> columns, uint64_t base_row,
                   uint64_t first, Timing so_far, ColumnsDone done);

  Device& device_;
  Device::Lane& lane_;
  const uint64_t load_bytes_;
  const uint64_t slot_bytes_;
  const uint64_t max_segments_;
  const uint64_t max_piece_bytes_;
  std::atomic<bool> cancelled_{false};
};

}  // namespace gpureduce::runtime
