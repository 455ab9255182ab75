// ReduceRowsAsync (kernels/reduce.h): each row of a row-major table reduced to its own Stats, the
// layout of NumPy's axis=-1 (issue 23).
//
// A task takes a run of rows. Rows of kShortestRun to kLongestRun elements go through the short
// runs pass where it takes the request (RunsPassTakes: PROD alone; int64's with moments
// or extremes up to 128 elements, and no SUM_SQUARES), each reduced where it lies in vector lanes
// (runs_pass.cc: rows of 16 float32 MIN 1.9 -> 4.3 GB/s, float16 SUM 1.2 -> 3.2 against the
// columns pass and the sums in place, one thread of the dev VM). Other short rows go through the
// columns pass a block of kColumnsWidth rows at a time, transposed in a buffer of the thread's
// (each row a column: the block's rows reduced side by side; int64's only where they want
// extremes), except sums alone of float rows, added where they lie (SumRowsInPlace); long ones (or
// requests the passes do not take) through ReduceBlock each. Every row's Stats goes to the sink
// from the task that reduced it, so the answers are finalized in parallel too. The cut depends only
// on the table's shape.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "kernels/cpu/block_reduce.h"
#include "kernels/cpu/sink_run.h"
#include "kernels/cpu/sums_in_place.h"
#include "kernels/cpu/transpose.h"
#include "kernels/reduce.h"

namespace gpureduce::kernels::cpu {
namespace {

using Clock = std::chrono::steady_clock;

// The short runs pass's rows (and segments) handed to the sink at once.
constexpr size_t kRowsAtOnce = 64;

// Rows at most this long go through the columns pass (a block's transposed copy stays within
// 256 KiB of float64); longer ones amortize ReduceBlock's set-up over their elements.
constexpr uint64_t kPassLongestRow = 128;

struct RowsJob {
  StatsRequest request;
  std::span<const std::byte> data;
  uint64_t length = 0;
  uint64_t rows = 0;
  uint64_t rows_per_task = 0;
  bool by_pass = false;
  bool by_runs = false;
  RowSink sink;
  DirectAnswers direct;
  std::atomic<size_t> remaining{0};
  RowsDone done;
  Clock::time_point submitted;
  std::once_flag started_once;
  Clock::time_point started;
};

// The transposed table's rows are this many elements longer than its columns are many: a
// power-of-two stride shared a handful of cache sets (rows of 128 float32 read 2.3 GB/s, 2
// threads of the AMD VM).
constexpr uint64_t kRowPad = 24;

void ReduceRowsByPass(const RowsJob& job, uint64_t first, uint64_t count) {
  const size_t element = DTypeSize(job.request.dtype);
  thread_local std::vector<uint64_t> buffer;  // words: aligned for every element size
  buffer.resize((kColumnsWidth + kRowPad) * kPassLongestRow * 8 / sizeof(uint64_t));
  auto* transposed = reinterpret_cast<std::byte*>(buffer.data());
  const Passes& passes = ChosenPasses();
  Stats block[kColumnsWidth];
  for (uint64_t r0 = first; r0 < first + count; r0 += kColumnsWidth) {
    const uint64_t width = std::min<uint64_t>(kColumnsWidth, first + count - r0);
    const std::byte* in = job.data.data() + r0 * job.length * element;
    TransposeBlock(element, in, job.length, width, job.length, transposed, width + kRowPad);
    std::fill(block, block + width, EmptyStats(job.request.dtype));
    passes.add_columns(job.request.dtype, job.request.needs, transposed, width + kRowPad,
                       job.length, width, 0, block);
    job.sink(r0, std::span<const Stats>(block, width));
  }
}

// Short rows through the short runs pass (RunsPassTakes), kRowsAtOnce at a time: their answers
// written by the pass where it can (job.direct), the others' Stats to the sink.
void ReduceRowsByRuns(const RowsJob& job, uint64_t first, uint64_t count) {
  const DType dtype = job.request.dtype;
  const size_t element = DTypeSize(dtype);
  uint64_t bounds[kRowsAtOnce + 1];
  for (size_t i = 0; i <= kRowsAtOnce; ++i) bounds[i] = i * job.length;
  Stats block[kRowsAtOnce];
  const Passes& passes = ChosenPasses();
  const DirectAnswers& direct = job.direct;
  for (uint64_t r0 = first; r0 < first + count; r0 += kRowsAtOnce) {
    const uint64_t n = std::min<uint64_t>(kRowsAtOnce, first + count - r0);
    const std::byte* rows = job.data.data() + r0 * job.length * element;
    const size_t answered =
        direct.empty() ? 0 : passes.answer_runs(dtype, direct, r0, rows, bounds, 0, n);
    if (answered == n) continue;
    passes.add_runs(dtype, job.request.needs, rows, bounds + answered, 0, n - answered, block);
    job.sink(r0 + answered, std::span<const Stats>(block, n - answered));
  }
}

// Sums alone of short rows (sums_in_place.h), kInterleave rows at a time, so that their
// additions run as independent chains.
template <DType kDType>
void SumRowsInPlace(const RowsJob& job, uint64_t first, uint64_t count) {
  constexpr uint64_t kInterleave = 4;
  const auto* data = reinterpret_cast<const SumsStorage<kDType>*>(job.data.data());
  const uint64_t length = job.length;
  SinkRun run(job.sink);
  for (uint64_t r0 = first; r0 < first + count; r0 += kInterleave) {
    const uint64_t n = std::min(kInterleave, first + count - r0);
    if (n < kInterleave) {  // the task's last few rows
      for (uint64_t r = r0; r < r0 + n; ++r) run.Add(r, SumsOf<kDType>(data + r * length, length));
      continue;
    }
    double sum[kInterleave] = {};
    uint32_t nans[kInterleave] = {};
    for (uint64_t e = 0; e < length; ++e) {
      for (uint64_t i = 0; i < kInterleave; ++i) {
        AddToSums<kDType>(data[(r0 + i) * length + e], sum[i], nans[i]);
      }
    }
    for (uint64_t i = 0; i < kInterleave; ++i) {
      run.Add(r0 + i, SumsStats<kDType>(data + (r0 + i) * length, length, sum[i], nans[i]));
    }
  }
}

void RunRowsTask(const std::shared_ptr<RowsJob>& job, uint64_t task) {
  std::call_once(job->started_once, [&] { job->started = Clock::now(); });
  const uint64_t first = task * job->rows_per_task;
  const uint64_t count = std::min(job->rows_per_task, job->rows - first);
  if (job->by_runs) {
    ReduceRowsByRuns(*job, first, count);
  } else if (job->by_pass && SumsInPlace(job->request.dtype, job->request.needs, job->length)) {
    VisitSumsDType(job->request.dtype,
                   [&](auto dtype) { SumRowsInPlace<decltype(dtype)::value>(*job, first, count); });
  } else if (job->by_pass) {
    ReduceRowsByPass(*job, first, count);
  } else {
    const size_t row_bytes = job->length * DTypeSize(job->request.dtype);
    SinkRun run(job->sink);
    for (uint64_t r = first; r < first + count; ++r) {
      run.Add(r, ReduceBlock(job->request, job->data.subspan(r * row_bytes, row_bytes), 0));
    }
  }
  if (job->remaining.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  ReduceTiming timing;
  timing.queue = job->started - job->submitted;
  timing.compute = Clock::now() - job->started;
  std::move(job->done)(timing);
}

}  // namespace

void ReduceRowsAsync(ThreadPool& pool, const StatsRequest& request, std::span<const std::byte> data,
                     uint64_t length, RowSink sink, RowsDone done, DirectAnswers direct) {
  auto job = std::make_shared<RowsJob>();
  job->request = request;
  job->data = data;
  job->length = length;
  job->rows = length == 0 ? 0 : data.size() / DTypeSize(request.dtype) / length;
  job->sink = std::move(sink);
  job->direct = direct;
  job->done = std::move(done);
  job->submitted = Clock::now();
  if (job->rows == 0) {
    std::move(job->done)(ReduceTiming{});
    return;
  }
  job->by_runs = RunsPassTakes(request, length);
  // int64 rows the short runs pass leaves go through the columns pass, transposed, only where
  // they want extremes: one thread of the dev VM against ReduceBlock, rows of 16 to 128 MIN
  // 1.2-1.5x, five ops 1.4-1.7x (rows of 2 and 4: MIN 0.9-1.0x, five ops 1.4-1.6x); SUM and VAR
  // lost, 0.53-0.90x.
  const bool int64_extremes = request.needs.min || request.needs.max;
  job->by_pass = !job->by_runs && (request.dtype != DType::kInt64 || int64_extremes) &&
                 length <= kPassLongestRow;
  // Tasks of about a task's elements (whole blocks of the pass's rows where it runs).
  uint64_t per_task = std::max<uint64_t>(1, TaskElements(request.dtype) / length);
  if (job->by_pass) per_task = (per_task + kColumnsWidth - 1) / kColumnsWidth * kColumnsWidth;
  job->rows_per_task = per_task;
  const uint64_t tasks = (job->rows + per_task - 1) / per_task;
  job->remaining.store(tasks, std::memory_order_relaxed);
  if (tasks == 1) {  // as ReduceAsync: a wake-up would cost more than the task
    RunRowsTask(job, 0);
    return;
  }
  for (uint64_t task = 0; task < tasks; ++task) {
    pool.Submit([job, task] { RunRowsTask(job, task); });
  }
}

}  // namespace gpureduce::kernels::cpu
