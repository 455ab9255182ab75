// ReduceColumnsAsync (kernels/reduce.h): a row-major table reduced down its columns, the layout of
// NumPy's `axis=0` (issue 23).
//
// A task takes a tile of kTileColumns columns and copies kBlockRows rows of it at a time into a
// buffer of its thread's, transposed, so that each column's piece is contiguous for ReduceBlock
// (the passes of the full reduction, with their NaN and first-occurrence rules); the piece's
// Stats then merge into the column's. A narrow table (few tiles) is also cut into blocks of rows
// whose partial Stats merge in row order at the end. The cut depends only on the table's shape
// (and, within a task, on where a float table's first NaN lies), so the result does too, on any
// number of threads. First version: correct for every op and dtype; each piece pays a
// ReduceBlock and a MergeStats, which rules tables of few rows.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/cpu/block_reduce.h"
#include "kernels/cpu/transpose.h"
#include "kernels/reduce.h"

namespace gpureduce::kernels::cpu {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kTileColumns = 64;
// The columns pass takes a table of up to kColumnsPassWidth columns in rows under a page whole,
// its rows read in order (1024 float32 columns, one thread of the dev VM: SUM 3.4 -> 5.0-5.5
// GB/s, MIN 2.6 -> 4.6, five ops 1.8 -> 3.1); a wider one, or one of rows a page or more long, in
// tiles this wide (16Ki columns: SUM 3.6, 3.3 and 3.0 GB/s in tiles of 256, 512 and 1024; 1,024
// float32 columns, 16 threads of the H200 host: in four tiles, four times the tasks, SUM
// 1.24-1.38x, MIN 1.12-1.28x, VAR 1.05-1.11x; one thread there VAR 0.76x, SUM 1.0x; rows of 2 KiB
// in tiles lost: float16's 1,024 columns 0.82-1.09x).
constexpr uint64_t kStridedTileColumns = 256;
// Narrower tables go transposed: the columns pass's per-row work outweighs a row's few elements
// (4 float32 columns, 2 threads of the AMD VM: 5.5 GB/s by the pass, 10 transposed).
constexpr uint64_t kPassLeastColumns = 32;
constexpr uint64_t kBlockRows = 512;
// The columns pass's calls take this many rows: each ends in a Stats and a MergeStats a column
// (about 16 ns each), which 512 rows of 1,024 float16 columns (1 MiB) paid every call (16
// threads of the H200 host against 512 rows: 64, 1,024 and 16,384 columns 1.03-1.29x). But a
// float block that holds a NaN is read again with the NaN masks (the pass's NaN-free first
// try), from past L2 at 2,048 rows of 256 float32 columns (one thread of the dev VM, a NaN every
// 1,000 to 4,000 rows: SUM 0.81-0.96x against 512). So a task's float calls take kBlockRows
// while its columns hold a NaN, and the first of them too; integers have none to find.
constexpr uint64_t kPassBlockRows = 4 * kBlockRows;

// Whether any of the columns holds a NaN.
bool AnyNan(const Stats* columns, uint64_t width) {
  for (uint64_t c = 0; c < width; ++c) {
    if (columns[c].nan_count != 0) return true;
  }
  return false;
}

// Enough tiles to keep a pool busy without cutting the rows; below it, rows are cut into blocks
// until there are about kWantedTasks tasks, at most kMostRowBlocks blocks (their partial Stats:
// at most that many per column). 16 threads of the H200 host, on top of 30954a8: 4,096 float32
// columns (16 tiles) cut into 8 blocks 1.17-1.53x; 16,384 (64 tiles) cut into 2 0.63-0.94x.
constexpr uint64_t kEnoughTiles = 32;
constexpr uint64_t kWantedTasks = 128;
constexpr uint64_t kMostRowBlocks = 32;
// The row blocks' partial Stats merge into the columns this many columns a task, on the pool: a
// MergeStats costs about 16 ns (frexp, divisions; the dev VM), so 31 blocks of 1,024 columns
// merged by the last task alone take 0.5 ms, a third of what 16 threads take to read 128 MiB.
constexpr uint64_t kMergeColumns = 64;

// The partial Stats' storage, left unset: 31 blocks of 1,024 columns are 5 MiB, which the caller
// set (and first touched) alone before any task began, at 16 threads a fifth or more of reading
// 128 MiB.
struct FreeStats {
  size_t size = 0;
  void operator()(Stats* stats) const { std::allocator<Stats>().deallocate(stats, size); }
};
static_assert(std::is_trivially_destructible_v<Stats>, "the partials are freed, not destroyed");

struct ColumnsJob {
  ThreadPool* pool = nullptr;
  StatsRequest request;
  std::span<const std::byte> data;
  uint64_t rows = 0;
  uint64_t cols = 0;
  uint64_t base_row = 0;
  std::span<Stats> columns;
  bool by_pass = false;  // the columns pass, else ReduceBlock over transposed columns
  uint64_t tile_columns = 0;
  uint64_t tiles = 0;
  uint64_t row_blocks = 1;
  uint64_t rows_per_block = 0;
  // [row block][column], for row blocks after the first: allocated by the caller, each task's
  // columns set by the task itself (RunColumnsTask).
  std::unique_ptr<Stats[], FreeStats> partials;
  std::atomic<size_t> remaining{0};
  std::atomic<size_t> merges_left{0};
  bool on_caller = false;  // a small table, run on the caller's thread: its merges too
  ColumnsDone done;
  Clock::time_point submitted;
  std::once_flag started_once;
  Clock::time_point started;
};

// A transposed column's rows are followed by this many unused elements: without them the
// columns' starts would be a power of two apart and share a handful of cache sets.
constexpr uint64_t kColumnPad = 24;

// Columns [c0, c0 + width) of rows [r0, r0 + count) into out[0, width), in row order.
void ReduceTile(const ColumnsJob& job, uint64_t c0, uint64_t width, uint64_t r0, uint64_t count,
                Stats* out) {
  const size_t element = DTypeSize(job.request.dtype);
  if (job.by_pass) {
    const Passes& passes = ChosenPasses();
    const bool floats = !IsInteger(job.request.dtype);
    uint64_t rows_a_call = floats ? kBlockRows : kPassBlockRows;
    for (uint64_t first = 0, block = 0; first < count; first += block) {
      block = std::min(rows_a_call, count - first);
      passes.add_columns(job.request.dtype, job.request.needs,
                         job.data.data() + ((r0 + first) * job.cols + c0) * element, job.cols,
                         block, width, job.base_row + r0 + first, out);
      if (floats) rows_a_call = AnyNan(out, width) ? kBlockRows : kPassBlockRows;
    }
    return;
  }
  thread_local std::vector<uint64_t> buffer;  // words: aligned for every element size
  buffer.resize(kTileColumns * (kBlockRows + kColumnPad) * 8 / sizeof(uint64_t));
  auto* transposed = reinterpret_cast<std::byte*>(buffer.data());
  for (uint64_t first = 0; first < count; first += kBlockRows) {
    const uint64_t block = std::min(kBlockRows, count - first);
    const std::byte* in = job.data.data() + ((r0 + first) * job.cols + c0) * element;
    TransposeBlock(element, in, job.cols, block, width, transposed, block + kColumnPad);
    for (uint64_t c = 0; c < width; ++c) {
      const std::span<const std::byte> piece(transposed + c * (block + kColumnPad) * element,
                                             block * element);
      out[c] = MergeStats(out[c], ReduceBlock(job.request, piece, job.base_row + r0 + first));
    }
  }
}

void Finish(ColumnsJob& job) {
  ReduceTiming timing;
  timing.queue = job.started - job.submitted;
  timing.compute = Clock::now() - job.started;
  std::move(job.done)(timing);
}

// Columns [c0, c0 + kMergeColumns) of the later row blocks merged after the first's, in row order
// (each column's order is fixed, so its bits do not depend on which thread merges it).
void MergeColumns(const std::shared_ptr<ColumnsJob>& job, uint64_t c0) {
  const uint64_t end = std::min(job->cols, c0 + kMergeColumns);
  for (uint64_t block = 1; block < job->row_blocks; ++block) {
    const Stats* partial = job->partials.get() + (block - 1) * job->cols;
    for (uint64_t c = c0; c < end; ++c) job->columns[c] = MergeStats(job->columns[c], partial[c]);
  }
  if (job->merges_left.fetch_sub(1, std::memory_order_acq_rel) == 1) Finish(*job);
}

void RunColumnsTask(const std::shared_ptr<ColumnsJob>& job, uint64_t task) {
  std::call_once(job->started_once, [&] { job->started = Clock::now(); });
  const uint64_t tile = task % job->tiles;
  const uint64_t row_block = task / job->tiles;
  const uint64_t c0 = tile * job->tile_columns;
  const uint64_t width = std::min(job->tile_columns, job->cols - c0);
  const uint64_t r0 = row_block * job->rows_per_block;
  const uint64_t count = std::min(job->rows_per_block, job->rows - r0);
  Stats* out = job->columns.data() + c0;
  if (row_block > 0) {  // the task's own partials, set here (in parallel, not by the caller)
    out = job->partials.get() + (row_block - 1) * job->cols + c0;
    std::uninitialized_fill_n(out, width, EmptyStats(job->request.dtype));
  }
  ReduceTile(*job, c0, width, r0, count, out);
  if (job->remaining.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (job->row_blocks == 1) return Finish(*job);
  const uint64_t merges = (job->cols + kMergeColumns - 1) / kMergeColumns;
  job->merges_left.store(merges, std::memory_order_relaxed);
  for (uint64_t m = 1; m < merges; ++m) {
    if (job->on_caller) {
      MergeColumns(job, m * kMergeColumns);
    } else {
      job->pool->Submit([job, m] { MergeColumns(job, m * kMergeColumns); });
    }
  }
  MergeColumns(job, 0);
}

}  // namespace

void ReduceColumnsAsync(ThreadPool& pool, const StatsRequest& request,
                        std::span<const std::byte> data, uint64_t rows, std::span<Stats> columns,
                        uint64_t base_row, ColumnsDone done) {
  auto job = std::make_shared<ColumnsJob>();
  job->pool = &pool;
  job->request = request;
  job->data = data;
  job->rows = rows;
  job->cols = columns.size();
  job->base_row = base_row;
  job->columns = columns;
  job->done = std::move(done);
  job->submitted = Clock::now();
  if (rows == 0 || columns.empty()) {
    std::move(job->done)(ReduceTiming{});
    return;
  }
  job->by_pass = job->cols >= kPassLeastColumns;
  if (!job->by_pass) {
    job->tile_columns = kTileColumns;
  } else {
    const bool whole =
        job->cols <= kColumnsPassWidth && job->cols * DTypeSize(request.dtype) < kPageBytes;
    job->tile_columns = whole ? job->cols : std::min(job->cols, kStridedTileColumns);
  }
  job->tiles = (job->cols + job->tile_columns - 1) / job->tile_columns;
  job->rows_per_block = rows;
  if (job->tiles < kEnoughTiles) {
    // Blocks of whole kBlockRows, at least a task's elements each, about kWantedTasks tasks in
    // all, at most kMostRowBlocks blocks.
    const uint64_t least = std::max<uint64_t>(kBlockRows, TaskElements(request.dtype) / job->cols);
    const uint64_t wanted = std::min(kMostRowBlocks, (kWantedTasks + job->tiles - 1) / job->tiles);
    const uint64_t by_count = (rows + wanted - 1) / wanted;
    const uint64_t per_block = std::max(least, by_count);
    job->rows_per_block = (per_block + kBlockRows - 1) / kBlockRows * kBlockRows;
  }
  job->row_blocks = (rows + job->rows_per_block - 1) / job->rows_per_block;
  if (job->row_blocks > 1) {
    const size_t partials = (job->row_blocks - 1) * job->cols;
    job->partials = std::unique_ptr<Stats[], FreeStats>(std::allocator<Stats>().allocate(partials),
                                                        FreeStats{partials});
  }
  const uint64_t tasks = job->tiles * job->row_blocks;
  job->remaining.store(tasks, std::memory_order_relaxed);
  if (tasks == 1 || rows * job->cols <= TaskElements(request.dtype)) {
    job->on_caller = true;
    for (uint64_t task = 0; task < tasks; ++task) RunColumnsTask(job, task);
    return;
  }
  for (uint64_t task = 0; task < tasks; ++task) {
    pool.Submit([job, task] { RunColumnsTask(job, task); });
  }
}

void ReduceColumns(ThreadPool& pool, const StatsRequest& request, std::span<const std::byte> data,
                   uint64_t rows, std::span<Stats> columns, uint64_t base_row) {
  std::promise<void> finished;
  ReduceColumnsAsync(pool, request, data, rows, columns, base_row,
                     [&finished](ReduceTiming) { finished.set_value(); });
  finished.get_future().get();
}

}  // namespace gpureduce::kernels::cpu
