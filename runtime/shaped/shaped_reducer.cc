#include "runtime/shaped/shaped_reducer.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"

namespace gpureduce::runtime {
namespace {

// `stats` of elements counted from `offset` on, as the kernel counted them from 0.
void ShiftIndices(uint64_t offset, gpureduce::Stats& stats) {
  const auto shift = static_cast<int64_t>(offset);
  if (stats.first_nan >= 0) stats.first_nan += shift;
  if (stats.min_index >= 0) stats.min_index += shift;
  if (stats.max_index >= 0) stats.max_index += shift;
}

}  // namespace

ShapedReducer::ShapedReducer(BlockKernels& kernels, const RequestSpec& spec)
    : kernels_(kernels),
      layout_(*spec.layout),
      request_{spec.dtype, gpureduce::NeedsOf(spec.ops())},
      element_bytes_(gpureduce::DTypeSize(spec.dtype)),
      results_(layout_, spec.ops(), spec.dtype, spec.ddof),
      open_(kernels::cpu::EmptyStats(spec.dtype)) {
  const std::vector<gpureduce::AxisGroup>& groups = layout_.groups();
  std::span<const gpureduce::AxisGroup> outer;
  uint64_t block_outputs = 1;
  if (layout_.count() == 0) {
    // No element will come (more are refused): Finish answers every output; nothing is set
    // aside (a (0, 2^24) table's columns would be 2^24 accumulators).
    map_.emplace(outer, block_outputs, spec.dtype, results_);
    return;
  }
  if (layout_.segmented()) {
    segmented_ = true;
    segments_ = layout_.outputs();
  } else if (groups.size() >= 2 && !groups.back().reduced) {
    // ..., reduce R, keep K: tables of R rows of K, reduced down their columns.
    rows_ = false;
    block_columns_ = groups.back().extent;
    block_rows_ = groups[groups.size() - 2].extent;
    block_.assign(block_columns_, kernels::cpu::EmptyStats(spec.dtype));
    outer = std::span(groups).first(groups.size() - 2);
    block_outputs = block_columns_;
  } else if (!groups.empty() && groups.back().reduced) {
    row_length_ = groups.back().extent;  // ..., reduce L: rows of L
    segments_ = row_length_ == 0 ? 0 : layout_.count() / row_length_;
    outer = std::span(groups).first(groups.size() - 1);
  } else {
    segments_ = layout_.count();  // nothing reduced: each element is its own output
  }
  map_.emplace(outer, block_outputs, spec.dtype, results_);
}

void ShapedReducer::Reduce(std::span<const std::byte> data, Done done) {
  piece_ = data;
  piece_base_ = position_;
  done_ = std::move(done);
  piece_timing_ = {};
  piece_started_ = false;
  Continue();
}

void ShapedReducer::Continue() {
  while (!PieceDone()) {
    // Whichever of this loop and the step's callback comes second goes on: the loop when the
    // step finished inline, the callback (on a pool thread) when it did not.
    auto second = std::make_shared<std::atomic<bool>>(false);
    auto next = [this, second]() {
      if (second->exchange(true)) Continue();
    };
    if (rows_) {
      LaunchRows(std::move(next));
    } else {
      LaunchColumns(std::move(next));
    }
    if (!second->exchange(true)) return;
  }
  Done done = std::move(done_);
  std::move(done)(status_, piece_timing_);
}

bool ShapedReducer::PieceDone() const {
  if (!status_.ok()) return true;
  const uint64_t end = piece_base_ + piece_.size() / element_bytes_;
  if (position_ < end) return false;
  // Empty segments where the piece ends are answered with it.
  return !rows_ || next_segment_ >= segments_ || SegmentEnd(next_segment_) != end;
}

bool ShapedReducer::StepFinished(const absl::Status& status,
                                 const kernels::cpu::ReduceTiming& timing, uint64_t elements) {
  if (!status.ok()) {
    status_.Update(status);
    return false;
  }
  position_ += elements;
  if (!piece_started_) piece_timing_.queue = timing.queue;
  piece_started_ = true;
  piece_timing_.compute += timing.compute;
  return true;
}

bool ShapedReducer::LaunchWholeRows(absl::AnyInvocable<void() &&>& next) {
  const uint64_t end = piece_base_ + piece_.size() / element_bytes_;
  if (segmented_ || !map_->direct() || row_length_ == 0 ||
      row_length_ > kernels_.max_direct_row(request_.dtype) || next_segment_ >= segments_ ||
      SegmentStart(next_segment_) != position_ || end - position_ < row_length_) {
    return false;
  }
  const uint64_t first = next_segment_;
  const uint64_t rows = (end - position_) / row_length_;
  const auto data = piece_.subspan((position_ - piece_base_) * element_bytes_,
                                   rows * row_length_ * element_bytes_);
  kernels_.Rows(
      request_, data, row_length_,
      [this, first](uint64_t row, std::span<const gpureduce::Stats> stats) {
        results_.Write(first + row, stats);
      },
      results_.Direct(first),
      [this, rows, next = std::move(next)](absl::Status status,
                                           kernels::cpu::ReduceTiming timing) mutable {
        if (StepFinished(status, timing, rows * row_length_)) next_segment_ += rows;
        std::move(next)();
      });
  return true;
}

void ShapedReducer::LaunchRows(absl::AnyInvocable<void() &&> next) {
  if (LaunchWholeRows(next)) return;
  const uint64_t lo = position_;
  const uint64_t end = piece_base_ + piece_.size() / element_bytes_;
  const uint64_t first = next_segment_;
  const bool sink = kernels_.max_sunk_segments() > 0 && map_->direct();
  uint64_t most = sink ? kernels_.max_sunk_segments() : kernels_.max_segments();
  // A row begun in an earlier piece goes alone where whole rows after it are faster whole
  // (LaunchWholeRows, the CPU's) than as segments.
  if (sink && !segmented_ && SegmentStart(first) < lo) most = 1;
  const uint64_t last = BatchEnd(first, most, end);  // one past the batch's last segment
  const uint64_t hi = std::min(SegmentEnd(last - 1), end);
  const auto data = piece_.subspan((lo - piece_base_) * element_bytes_, (hi - lo) * element_bytes_);
  if (sink) {
    LaunchSegmentsToSink(first, last, lo, hi, end, data, std::move(next));
    return;
  }
  auto bounds = std::make_shared<std::vector<uint64_t>>();
  bounds->reserve(last - first + 1);
  for (uint64_t s = first; s < last; ++s) bounds->push_back(std::max(SegmentStart(s), lo) - lo);
  bounds->push_back(hi - lo);
  kernels_.Segments(request_, data, *bounds,
                    [this, bounds, first, last, lo, hi, end, next = std::move(next)](
                        absl::StatusOr<std::vector<gpureduce::Stats>> reduced,
                        kernels::cpu::ReduceTiming timing) mutable {
                      if (StepFinished(reduced.status(), timing, 0)) {
                        // In order: the map may merge blocks as they come.
                        std::vector<gpureduce::Stats>& pieces = *reduced;
                        BatchEdges edges;
                        uint64_t i = 0, n = pieces.size();
                        if (SegmentStart(first) < lo) edges.head = std::move(pieces[i++]);
                        if (AnswerHead(first, lo, end, edges)) {
                          if (n > i && SegmentEnd(first + n - 1) > end) {
                            edges.tail = std::move(pieces[--n]);
                          }
                          for (; i < n; ++i) map_->Deliver(first + i, std::span(&pieces[i], 1));
                          SetTailAside(last, edges);
                        }
                        position_ += hi - lo;
                      }
                      std::move(next)();
                    });
}

uint64_t ShapedReducer::BatchEnd(uint64_t first, uint64_t most, uint64_t end) const {
  // The segments that start before the piece's end, and the empty ones at it: a prefix of those
  // from `first` (bounds only grow), found by halving (a batch takes up to 4Mi segments).
  uint64_t low = first, high = std::min(segments_, first + most);
  while (low < high) {
    const uint64_t middle = low + (high - low) / 2;
    if (SegmentStart(middle) < end || SegmentEnd(middle) <= end) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return low;
}

void ShapedReducer::LaunchSegmentsToSink(uint64_t first, uint64_t last, uint64_t lo, uint64_t hi,
                                         uint64_t end, std::span<const std::byte> data,
                                         absl::AnyInvocable<void() &&> next) {
  // A segment within the piece answers its output from the task that reduced it (outputs in
  // any order: the map is direct); the batch's first, if it began in an earlier piece, and its
  // last, if it goes on in the next, wait for AnswerHead and SetTailAside. The kernel reads the
  // layout's own bounds (counted from the array's start: nothing serial per segment here);
  // rows of one length have none, so theirs are written out.
  std::shared_ptr<std::vector<uint64_t>> starts;
  std::span<const uint64_t> bounds;
  if (segmented_) {
    bounds = std::span<const uint64_t>(layout_.bounds()).subspan(first, last - first + 1);
  } else {
    starts = std::make_shared<std::vector<uint64_t>>();
    starts->reserve(last - first + 1);
    for (uint64_t s = first; s <= last; ++s) starts->push_back(SegmentStart(s));
    bounds = *starts;
  }
  auto edges = std::make_shared<BatchEdges>();
  kernels_.SegmentsTo(
      request_, data, bounds, lo,
      [this, first, lo, end, edges](uint64_t i, std::span<const gpureduce::Stats> stats) {
        // The batch's first segment and its last may be cut; a run's others are whole.
        const uint64_t s = first + i;
        if (SegmentStart(s) < lo) {
          edges->head = stats.front();
          stats = stats.subspan(1);
          ++i;
        }
        if (!stats.empty() && SegmentEnd(first + i + stats.size() - 1) > end) {
          edges->tail = stats.back();
          stats = stats.first(stats.size() - 1);
        }
        if (!stats.empty()) results_.Write(first + i, stats);
      },
      results_.Direct(first),
      [this, starts, first, last, lo, hi, end, edges, next = std::move(next)](
          absl::Status status, kernels::cpu::ReduceTiming timing) mutable {
        if (StepFinished(status, timing, 0)) {
          if (AnswerHead(first, lo, end, *edges)) SetTailAside(last, *edges);
          position_ += hi - lo;
        }
        std::move(next)();
      });
}

bool ShapedReducer::AnswerHead(uint64_t first, uint64_t lo, uint64_t end, BatchEdges& edges) {
  if (!edges.head.has_value()) return true;
  gpureduce::Stats& stats = *edges.head;  // its first elements came in earlier pieces
  ShiftIndices(lo - SegmentStart(first), stats);
  stats = gpureduce::MergeStats(open_, stats);
  if (SegmentEnd(first) > end) {
    open_ = std::move(stats);  // it goes on in the next piece too
    return false;
  }
  map_->Deliver(first, std::span(&stats, 1));
  open_ = kernels::cpu::EmptyStats(request_.dtype);
  return true;
}

void ShapedReducer::SetTailAside(uint64_t last, BatchEdges& edges) {
  if (edges.tail.has_value()) {  // segment last - 1 goes on in the next piece
    open_ = std::move(*edges.tail);
    next_segment_ = last - 1;
  } else {
    next_segment_ = last;
  }
}

void ShapedReducer::LaunchColumns(absl::AnyInvocable<void() &&> next) {
  const uint64_t block_size = block_rows_ * block_columns_;
  const uint64_t at = position_;
  const uint64_t left = piece_base_ + piece_.size() / element_bytes_ - at;
  const uint64_t block = at / block_size;
  const uint64_t row = at % block_size / block_columns_;
  const uint64_t column = at % block_columns_;
  // A row cut by a piece's end goes alone; whole rows go together, up to the block's end.
  uint64_t rows = 1;
  uint64_t width = std::min(block_columns_ - column, left);
  if (column == 0 && left >= block_columns_) {
    rows = std::min(left / block_columns_, block_rows_ - row);
    width = block_columns_;
  }
  const uint64_t elements = rows * width;
  const auto data = piece_.subspan((at - piece_base_) * element_bytes_, elements * element_bytes_);
  kernels_.Columns(request_, data, rows, std::span(block_).subspan(column, width), row,
                   [this, block, block_size, elements, next = std::move(next)](
                       absl::Status status, kernels::cpu::ReduceTiming timing) mutable {
                     if (StepFinished(status, timing, elements) && position_ % block_size == 0) {
                       map_->Deliver(block, block_);
                       std::fill(block_.begin(), block_.end(),
                                 kernels::cpu::EmptyStats(request_.dtype));
                     }
                     std::move(next)();
                   });
}

absl::StatusOr<std::vector<ArrayResult>> ShapedReducer::Finish() {
  if (!status_.ok()) return status_;
  if (position_ != layout_.count()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the request ended after ", position_, " of the ", layout_.count(), " elements its ",
        layout_.Describe(), " holds; no result is given for a partial array"));
  }
  const gpureduce::Stats empty = kernels::cpu::EmptyStats(request_.dtype);
  if (layout_.count() == 0) {
    results_.Write(0, std::vector<gpureduce::Stats>(layout_.outputs(), empty));
  } else {
    for (; rows_ && next_segment_ < segments_; ++next_segment_) {
      map_->Deliver(next_segment_, std::span(&empty, 1));  // empty segments at the end
    }
  }
  if (!results_.status().ok()) return results_.status();
  return results_.Take();
}

}  // namespace gpureduce::runtime
