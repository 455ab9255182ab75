#pragma once

// What a ShapedReducer (issue 23) asks of a backend's kernels: the Stats of segments of a piece
// and the Stats of a table's columns, asynchronously. The CPU's are kernels/reduce.h's
// (CpuBlockKernels); a GPU's stage each piece in a staging slot and run
// kernels/cuda/segmented/segmented_stats.h (runtime/cuda/cuda_block_kernels.h).

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/reduction/stats.h"
#include "common/thread_pool.h"
#include "kernels/reduce.h"

namespace gpureduce::runtime {

class BlockKernels {
 public:
  using Timing = kernels::cpu::ReduceTiming;
  using SegmentsDone =
      absl::AnyInvocable<void(absl::StatusOr<std::vector<gpureduce::Stats>>, Timing) &&>;
  using ColumnsDone = absl::AnyInvocable<void(absl::Status, Timing) &&>;
  using RowsDone = absl::AnyInvocable<void(absl::Status, Timing) &&>;

  virtual ~BlockKernels() = default;

  // The most bytes of payload one call takes (the session cuts longer pieces), and the most
  // segments.
  virtual uint64_t max_piece_bytes() const = 0;
  virtual uint64_t max_segments() const = 0;
  // The most segments one SegmentsTo call takes (nothing held per segment but its bound); 0
  // where there is no SegmentsTo.
  virtual uint64_t max_sunk_segments() const { return 0; }
  // The longest row Rows takes; 0 where there is no Rows.
  virtual uint64_t max_direct_row(gpureduce::DType dtype) const = 0;

  // kernels::cpu::ReduceSegmentsAsync's contract: each segment [bounds[s], bounds[s + 1]) of
  // `data` to its own Stats, indices from the segment's start.
  virtual void Segments(const kernels::cpu::StatsRequest& request, std::span<const std::byte> data,
                        std::span<const uint64_t> bounds, SegmentsDone done) = 0;
  // kernels::cpu::ReduceColumnsAsync's: `rows` rows of columns.size() elements merged into
  // `columns`, row r's indices base_row + r.
  virtual void Columns(const kernels::cpu::StatsRequest& request, std::span<const std::byte> data,
                       uint64_t rows, std::span<gpureduce::Stats> columns, uint64_t base_row,
                       ColumnsDone done) = 0;
  // kernels::cpu::ReduceSegmentsAsync's with a sink (the CPU's): every segment's Stats to `sink`
  // (segment indices within `bounds`) from the tasks that reduced them, as Rows's rows, once,
  // before `done`; `data` begins `base` elements into what `bounds` count (each clamped to
  // data's ends). Only where max_sunk_segments() is not 0. `direct`: as ReduceSegmentsAsync's.
  virtual void SegmentsTo(const kernels::cpu::StatsRequest& /*request*/,
                          std::span<const std::byte> /*data*/, std::span<const uint64_t> /*bounds*/,
                          uint64_t /*base*/, kernels::cpu::RowSink /*sink*/,
                          kernels::cpu::DirectAnswers /*direct*/, RowsDone done) {
    std::move(done)(absl::UnimplementedError("these kernels return segments' Stats"), Timing{});
  }
  // kernels::cpu::ReduceRowsAsync's: whole rows of `length`, each row's Stats to `sink` (or its
  // answer to `direct`).
  virtual void Rows(const kernels::cpu::StatsRequest& request, std::span<const std::byte> data,
                    uint64_t length, kernels::cpu::RowSink sink, kernels::cpu::DirectAnswers direct,
                    RowsDone done) = 0;
  // The request gave up (ReduceSession::Cancel): work waiting for resources ends with
  // CANCELLED, and later calls too. The CPU's tasks never wait: nothing to do.
  virtual void Cancel() {}
};

// The CPU backend's: its pool's tasks.
class CpuBlockKernels final : public BlockKernels {
 public:
  // `max_sunk_segments`: the batches' size (tests make it small to cut a request into several).
  explicit CpuBlockKernels(ThreadPool& pool, uint64_t max_sunk_segments = uint64_t{1} << 22)
      : pool_(pool), max_sunk_segments_(max_sunk_segments) {}

  // Unbounded: the CPU reads a piece where it lies.
  uint64_t max_piece_bytes() const override { return 0; }
  // Their Stats (168 bytes each) stay a few MiB however many segments a piece holds.
  uint64_t max_segments() const override { return 16384; }
  // Answered as they are reduced, segments hold nothing here (the kernels read the request's
  // own bounds): a batch is a barrier for the pool, so as many as a piece holds, up to 4Mi
  // (segments of 16 float32 in batches of 256Ki were 64 tasks each: 16 threads of the H200
  // host read them at a third of rows of 16's rate).
  uint64_t max_sunk_segments() const override { return max_sunk_segments_; }
  uint64_t max_direct_row(gpureduce::DType dtype) const override {
    return kernels::cpu::TaskElements(dtype);
  }

  void Segments(const kernels::cpu::StatsRequest& request, std::span<const std::byte> data,
                std::span<const uint64_t> bounds, SegmentsDone done) override;
  void Columns(const kernels::cpu::StatsRequest& request, std::span<const std::byte> data,
               uint64_t rows, std::span<gpureduce::Stats> columns, uint64_t base_row,
               ColumnsDone done) override;
  void Rows(const kernels::cpu::StatsRequest& request, std::span<const std::byte> data,
            uint64_t length, kernels::cpu::RowSink sink, kernels::cpu::DirectAnswers direct,
            RowsDone done) override;
  void SegmentsTo(const kernels::cpu::StatsRequest& request, std::span<const std::byte> data,
                  std::span<const uint64_t> bounds, uint64_t base, kernels::cpu::RowSink sink,
                  kernels::cpu::DirectAnswers direct, RowsDone done) override;

 private:
  ThreadPool& pool_;
  const uint64_t max_sunk_segments_;
};

}  // namespace gpureduce::runtime
