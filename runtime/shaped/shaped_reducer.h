#pragma once

// The CPU's reduction of an array request (issue 23): the payload's elements in C order, in any
// number of pieces cut anywhere, reduced into one answer per output of the request's layout.
//
// The layout's innermost groups make the inner block: a row (the last axes reduced; a segment)
// or a table reduced down its columns (a reduced group and a kept one after it). Rows go to the
// kernels (BlockKernels: the CPU's or a GPU's) in batches of segments, tables a run of whole rows
// at a time; a block cut by a piece's end carries its Stats into the next piece. The blocks'
// Stats then go to their outputs (OutputMap). Memory: the answers, one block's accumulators and
// OutputMap's window, whatever the payload's length.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "common/reduction/reduce_layout.h"
#include "kernels/reduce.h"
#include "runtime/backend.h"
#include "runtime/shaped/array_results.h"
#include "runtime/shaped/block_kernels.h"
#include "runtime/shaped/output_map.h"

namespace gpureduce::runtime {

class ShapedReducer {
 public:
  // The piece's status: the first failure of the kernels, which every later piece repeats.
  using Done = absl::AnyInvocable<void(absl::Status, kernels::cpu::ReduceTiming) &&>;

  // spec.layout must be set; the reducer keeps a reference to it and to `kernels`.
  ShapedReducer(BlockKernels& kernels, const RequestSpec& spec);

  // Reduces `data` (whole elements of the request's dtype, aligned to their size), the elements
  // following everything reduced so far; `data` must stay valid until `done`, which runs once
  // they are reduced, on a kernels' thread or on the caller's before Reduce returns. At most
  // kernels.max_piece_bytes() (when not 0); one at a time.
  void Reduce(std::span<const std::byte> data, Done done);

  // Once every element has been reduced: the answers, one array per op.
  absl::StatusOr<std::vector<ArrayResult>> Finish();

 private:
  // The next step over the current piece, which calls `next` once its Stats are delivered.
  void LaunchRows(absl::AnyInvocable<void() &&> next);
  // The piece's whole rows from position_ (a row's start) at once, each answered by the task that
  // reduced it (ReduceRowsAsync): uniform rows that fit a task, answering their own outputs.
  bool LaunchWholeRows(absl::AnyInvocable<void() &&>& next);
  // Segments [first, last) of the piece's [lo, hi) by kernels that answer each to a sink (their
  // outputs directly; the piece ends at `end`).
  void LaunchSegmentsToSink(uint64_t first, uint64_t last, uint64_t lo, uint64_t hi, uint64_t end,
                            std::span<const std::byte> data, absl::AnyInvocable<void() &&> next);
  // One past the last segment of a batch from `first` (at most `most`) in a piece ending at
  // `end`: those that start before it, and empty ones at it.
  uint64_t BatchEnd(uint64_t first, uint64_t most, uint64_t end) const;
  // A batch of segments' ends cut by the piece's bounds: the first's Stats if it began in an
  // earlier piece, the last's if it goes on in the next (set from the kernels' threads).
  struct BatchEdges {
    std::optional<gpureduce::Stats> head;
    std::optional<gpureduce::Stats> tail;
  };
  // Once a batch of segments from `first` in the piece [lo, end) is reduced: its first, if it
  // began in an earlier piece (edges.head), merged with what came before and answered; false
  // when it goes on past the piece (then it is the batch's only segment, set aside).
  bool AnswerHead(uint64_t first, uint64_t lo, uint64_t end, BatchEdges& edges);
  // Then, the other segments answered: the last, if it goes on in the next piece (edges.tail),
  // set aside; next_segment_ moved on to the first not answered of those up to `last`.
  void SetTailAside(uint64_t last, BatchEdges& edges);
  void LaunchColumns(absl::AnyInvocable<void() &&> next);
  // Runs the piece's steps one after another without recursing when they finish inline.
  void Continue();
  bool PieceDone() const;
  // Whether the step's status let it finish; a failure is kept and ends the piece.
  bool StepFinished(const absl::Status& status, const kernels::cpu::ReduceTiming& timing,
                    uint64_t elements);

  uint64_t SegmentStart(uint64_t s) const {
    return segmented_ ? layout_.bounds()[s] : s * row_length_;
  }
  uint64_t SegmentEnd(uint64_t s) const { return SegmentStart(s + 1); }

  BlockKernels& kernels_;
  const gpureduce::ReduceLayout& layout_;
  const kernels::cpu::StatsRequest request_;
  const size_t element_bytes_;
  ArrayResults results_;

  // Rows: segments of the layout, or of row_length_ elements.
  bool rows_ = true;
  bool segmented_ = false;
  uint64_t row_length_ = 1;
  uint64_t segments_ = 0;
  uint64_t next_segment_ = 0;  // the first not yet delivered
  gpureduce::Stats open_;      // the elements of next_segment_ before position_
  // Columns: blocks of block_rows_ rows of block_columns_ elements.
  uint64_t block_rows_ = 0;
  uint64_t block_columns_ = 0;
  std::vector<gpureduce::Stats> block_;  // the current block's columns so far

  std::optional<OutputMap> map_;  // made once results_ is

  uint64_t position_ = 0;    // elements reduced
  uint64_t piece_base_ = 0;  // the current piece's first element
  std::span<const std::byte> piece_;
  Done done_;
  kernels::cpu::ReduceTiming piece_timing_;
  bool piece_started_ = false;
  absl::Status status_;  // the first failure
};

}  // namespace gpureduce::runtime
