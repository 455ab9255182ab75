#include "runtime/shaped/block_kernels.h"

#include <utility>

namespace gpureduce::runtime {

void CpuBlockKernels::Segments(const kernels::cpu::StatsRequest& request,
                               std::span<const std::byte> data, std::span<const uint64_t> bounds,
                               SegmentsDone done) {
  kernels::cpu::ReduceSegmentsAsync(
      pool_, request, data, bounds,
      [done = std::move(done)](std::vector<gpureduce::Stats> stats, Timing timing) mutable {
        std::move(done)(std::move(stats), timing);
      });
}

void CpuBlockKernels::SegmentsTo(const kernels::cpu::StatsRequest& request,
                                 std::span<const std::byte> data, std::span<const uint64_t> bounds,
                                 uint64_t base, kernels::cpu::RowSink sink,
                                 kernels::cpu::DirectAnswers direct, RowsDone done) {
  kernels::cpu::ReduceSegmentsAsync(
      pool_, request, data, bounds, base, std::move(sink),
      [done = std::move(done)](std::vector<gpureduce::Stats>, Timing timing) mutable {
        std::move(done)(absl::OkStatus(), timing);
      },
      direct);
}

void CpuBlockKernels::Columns(const kernels::cpu::StatsRequest& request,
                              std::span<const std::byte> data, uint64_t rows,
                              std::span<gpureduce::Stats> columns, uint64_t base_row,
                              ColumnsDone done) {
  kernels::cpu::ReduceColumnsAsync(pool_, request, data, rows, columns, base_row,
                                   [done = std::move(done)](Timing timing) mutable {
                                     std::move(done)(absl::OkStatus(), timing);
                                   });
}

void CpuBlockKernels::Rows(const kernels::cpu::StatsRequest& request,
                           std::span<const std::byte> data, uint64_t length,
                           kernels::cpu::RowSink sink, kernels::cpu::DirectAnswers direct,
                           RowsDone done) {
  kernels::cpu::ReduceRowsAsync(
      pool_, request, data, length, std::move(sink),
      [done = std::move(done)](Timing timing) mutable {
        std::move(done)(absl::OkStatus(), timing);
      },
      direct);
}

}  // namespace gpureduce::runtime
