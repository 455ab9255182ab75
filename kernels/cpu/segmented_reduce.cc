// ReduceSegmentsAsync (kernels/reduce.h): one Stats per segment, on the thread pool in the fixed
// tasks of ReduceAsync, each task reducing the pieces of the segments that meet it.
//
// Each task writes the Stats of the segments that start in it into their places, in parallel; a
// segment that began in an earlier task leaves its piece aside (at most one a task), merged in
// task order at the end. A piece is a ReduceBlock call and a Stats of its own, whose fixed cost
// rules segments of a few dozen elements; so short float segments that lie whole in a task go
// elsewhere. Those the short runs pass takes (RunsPassTakes: 4 to 512 elements, PROD
// alone; int64 past 128 sums alone) go through it, a row of consecutive ones at once (one thread
// of the dev VM, segments of 16 float32: MIN 1.9 -> 2.9 GB/s, the five-op request 1.0 -> 1.6; of
// 128: 1.9 -> 3.9). Shorter ones go through the columns pass where it is faster
// (PassLongestSegment), up to kColumnsWidth at once, each a column of a transposed block padded
// with NaN to the group's longest (the pass skips NaN; the padding is then taken out of each
// segment's count, NaN count and first NaN), or, sums alone, are added where they lie
// (sums_in_place.h).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "kernels/cpu/block_reduce.h"
#include "kernels/cpu/bound_search.h"
#include "kernels/cpu/sink_run.h"
#include "kernels/cpu/sums_in_place.h"
#include "kernels/reduce.h"

namespace gpureduce::kernels::cpu {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kPassLongestSegment = 64;
// The transposed block's rows are this much longer than its columns are many (rows_reduce.cc's
// kRowPad: a power-of-two stride shares a handful of cache sets).
constexpr uint64_t kGroupPad = 24;

// The piece of a segment that began in an earlier task, reduced.
struct Piece {
  size_t segment;
  Stats stats;
};

struct SegmentsJob {
  StatsRequest request;
  std::span<const std::byte> data;
  std::span<const uint64_t> bounds;
  uint64_t base = 0;  // the element of the array `data` begins with, where `bounds` count from
  uint64_t count = 0;
  size_t task_elements = 0;
  RowSink sink;                                  // where whole segments go, if set
  DirectAnswers direct;                          // with a sink: answers written by the pass
  std::vector<Stats> segments;                   // each written by the task it starts in (no sink)
  std::vector<std::optional<Piece>> carried;     // per task: the piece of a segment begun earlier
  std::vector<std::optional<Piece>> continuing;  // per task, with a sink: one going on after it
  std::atomic<size_t> remaining{0};
  SegmentsDone done;
  Clock::time_point submitted;
  std::once_flag started_once;
  Clock::time_point started;

  // Segment s's first element in `data` (a bound outside it clamped to its ends).
  uint64_t Bound(size_t s) const { return std::clamp(bounds[s], base, base + count) - base; }
};

// The longest segment of `request` that goes through the columns pass; 0: none. Floats only (a
// NaN pads them). Measured on the 2-core dev VM against ReduceBlock per segment (float32 and
// float64, 16 to 128 elements): the pass wins where it fuses sums with extremes in one read (1.2x
// to 1.5x up to 64 elements) and for sums alone up to 32 (1.2x to 1.4x at 16); ReduceBlock's
// extremes pass alone, and its moments, are faster at every length, as are sums past 32.
uint64_t PassLongestSegment(const StatsRequest& request) {
  if (IsInteger(request.dtype)) return 0;
  const StatsNeeds& needs = request.needs;
  const bool extremes = needs.min || needs.max;
  const bool sums = needs.sum || needs.sum_squares || needs.moments;
  if (extremes && sums) return kPassLongestSegment;
  if (!extremes && !needs.moments) return 32;
  return 0;
}

// A segment's Stats, whole: to the sink (through `run`) where there is one, else kept for `done`.
void Complete(SegmentsJob& job, SinkRun& run, size_t segment, Stats stats) {
  if (job.sink) {
    run.Add(segment, stats);
  } else {
    job.segments[segment] = std::move(stats);
  }
}

// Segments group[0..count) (each whole, 1 to kPassLongestSegment elements) side by side through
// the columns pass.
void ReduceGroupByPass(SegmentsJob& job, SinkRun& run, const size_t* group, size_t count) {
  uint64_t longest = 0;
  for (size_t c = 0; c < count; ++c) {
    longest = std::max(longest, job.Bound(group[c] + 1) - job.Bound(group[c]));
  }
  const uint64_t stride = count + kGroupPad;
  thread_local std::vector<uint64_t> buffer;  // words: aligned for every element size
  buffer.resize((kColumnsWidth + kGroupPad) * kPassLongestSegment);
  const auto fill = [&]<typename ElementT>(ElementT nan) {
    auto* to = reinterpret_cast<ElementT*>(buffer.data());
    const auto* from = reinterpret_cast<const ElementT*>(job.data.data());
    for (size_t c = 0; c < count; ++c) {
      const uint64_t first = job.Bound(group[c]), length = job.Bound(group[c] + 1) - first;
      for (uint64_t r = 0; r < length; ++r) to[r * stride + c] = from[first + r];
      for (uint64_t r = length; r < longest; ++r) to[r * stride + c] = nan;
    }
  };
  switch (job.request.dtype) {
    case DType::kFloat16:
      fill(uint16_t{0x7e00});
      break;
    case DType::kBFloat16:
      fill(uint16_t{0x7fc0});
      break;
    case DType::kFloat32:
      fill(std::numeric_limits<float>::quiet_NaN());
      break;
    default:  // float64 (PassTakesSegments: floats only)
      fill(std::numeric_limits<double>::quiet_NaN());
      break;
  }
  Stats block[kColumnsWidth];
  std::fill(block, block + count, EmptyStats(job.request.dtype));
  ChosenPasses().add_columns(job.request.dtype, job.request.needs,
                             reinterpret_cast<const std::byte*>(buffer.data()), stride, longest,
                             count, 0, block);
  for (size_t c = 0; c < count; ++c) {
    const uint64_t length = job.Bound(group[c] + 1) - job.Bound(group[c]);
    Stats& stats = block[c];
    stats.count -= longest - length;
    stats.nan_count -= longest - length;
    // A first NaN found in the padding (after every element) is none of the segment's.
    if (stats.first_nan >= static_cast<int64_t>(length)) stats.first_nan = -1;
    Complete(job, run, group[c], stats);
  }
}

// Segments first .. first + count - 1 (at most kRunsAtOnce, each RunsPassTakes's, whole in
// `data`) through the short runs pass: segment first + i holds data's elements bounds[i] - base
// to bounds[i + 1] - base. `own`: those elements are the whole segments, so the pass may write
// their answers; else (a segment cut by data's ends) its Stats go to the sink, which merges them
// with its other pieces'.
constexpr size_t kRunsAtOnce = 64;
void ReduceRunsByPass(SegmentsJob& job, size_t first, size_t count, const uint64_t* bounds,
                      uint64_t base, bool own) {
  const Passes& passes = ChosenPasses();
  if (!job.sink) {
    passes.add_runs(job.request.dtype, job.request.needs, job.data.data(), bounds, base, count,
                    &job.segments[first]);
    return;
  }
  const DType dtype = job.request.dtype;
  const DirectAnswers& direct = job.direct;
  const size_t answered =
      direct.empty() || !own
          ? 0
          : passes.answer_runs(dtype, direct, first, job.data.data(), bounds, base, count);
  if (answered == count) return;
  Stats block[kRunsAtOnce];
  passes.add_runs(dtype, job.request.needs, job.data.data(), bounds + answered, base,
                  count - answered, block);
  job.sink(first + answered, std::span<const Stats>(block, count - answered));
}

// How many segments from `first` on (at most kRunsAtOnce, the first one's already known) the short
// runs pass takes and end by `last` (in the request's own count, so the scan compares the bounds
// as they are: segments of 16 float32 cost twice rows of 16 while it clamped each).
size_t RunsFrom(const SegmentsJob& job, size_t first, uint64_t last) {
  const uint64_t* bounds = job.bounds.data();
  const size_t limit = std::min(job.bounds.size() - 1, first + kRunsAtOnce);
  const uint64_t longest = RunsPassLongest(job.request);
  size_t s = first + 1;
  while (s < limit && bounds[s + 1] <= last && bounds[s + 1] - bounds[s] >= kShortestRun &&
         bounds[s + 1] - bounds[s] <= longest) {
    ++s;
  }
  return s - first;
}

// Task `task`'s elements [begin, end): the segments that meet it, from the one holding `begin`
// (the last bound at or before it) to the last that starts before `end`. True where it met every
// segment that starts in them and none was empty, so SinkEmptySegments has none to find (its scan
// of the task's bounds was a sixteenth of int32 segments of 16's kernel time, perf on the dev VM).
bool ReducePieces(SegmentsJob& job, size_t task) {
  const uint64_t begin = task * job.task_elements;
  const uint64_t end = std::min<uint64_t>(job.count, begin + job.task_elements);
  const size_t element_bytes = DTypeSize(job.request.dtype);
  // (Bound(0) is 0; were it not, the elements before it would be skipped, not misread.) The
  // first s with Bound(s) > begin, as begin < count: with bounds[s] > base + begin.
  const size_t after = GallopFrom(job.bounds, UniformGuess(begin, job.count, job.bounds.size() - 1),
                                  [&](uint64_t bound) { return bound <= job.base + begin; });
  const uint64_t by_pass = PassLongestSegment(job.request);
  // Sums alone of those (by_pass is within SumsInPlace's lengths) are added where they lie.
  // (Past by_pass, ReduceBlock's vector lanes beat one chain of additions: 0.5x at 128.)
  const bool in_place = by_pass > 0 && SumsInPlace(job.request.dtype, job.request.needs, by_pass);
  size_t group[kColumnsWidth];
  size_t grouped = 0;
  SinkRun run(job.sink);
  const size_t first = after == 0 ? 0 : after - 1;
  // Empty segments at `begin` before `first` (their bounds all `begin`) are not met; nor are
  // those at the end of the last task's.
  bool every_one_met = (first == 0 || job.Bound(first - 1) < begin) && end < job.count;
  for (size_t s = first; s + 1 < job.bounds.size() && job.Bound(s) < end; ++s) {
    const uint64_t from = std::max(begin, job.Bound(s));
    const uint64_t to = std::min(end, job.Bound(s + 1));
    if (from >= to) {  // an empty segment
      every_one_met = false;
      continue;
    }
    const bool whole = from == job.Bound(s) && to == job.Bound(s + 1);
    if (whole && RunsPassTakes(job.request, to - from)) {
      if (job.bounds[s] >= job.base && job.bounds[s + 1] <= job.base + end) {
        const size_t runs = RunsFrom(job, s, job.base + end);
        ReduceRunsByPass(job, s, runs, job.bounds.data() + s, job.base, true);
        s += runs - 1;
      } else {  // cut by data's ends: by its clamped bounds
        const uint64_t clamped[] = {from, to};
        ReduceRunsByPass(job, s, 1, clamped, 0, false);
      }
      continue;
    }
    if (in_place && whole && to - from <= by_pass) {
      Complete(job, run, s, VisitSumsDType(job.request.dtype, [&](auto dtype) {
                 constexpr DType kDType = decltype(dtype)::value;
                 return SumsOf<kDType>(
                     reinterpret_cast<const SumsStorage<kDType>*>(job.data.data()) + from,
                     to - from);
               }));
      continue;
    }
    if (whole && to - from <= by_pass) {
      group[grouped++] = s;
      if (grouped == kColumnsWidth) {
        ReduceGroupByPass(job, run, group, grouped);
        grouped = 0;
      }
      continue;
    }
    const auto bytes = job.data.subspan(from * element_bytes, (to - from) * element_bytes);
    Stats stats = ReduceBlock(job.request, bytes, from - job.Bound(s));
    if (whole) {
      Complete(job, run, s, std::move(stats));
    } else if (job.Bound(s) < begin) {
      job.carried[task] = Piece{s, std::move(stats)};
    } else if (job.sink) {
      job.continuing[task] = Piece{s, std::move(stats)};
    } else {
      job.segments[s] = std::move(stats);
    }
  }
  if (grouped > 0) ReduceGroupByPass(job, run, group, grouped);
  return every_one_met;
}

// With a sink, once every task is done: the segments cut across tasks, each one's pieces merged
// in order (it goes on from the task it began in, `continuing`, through the next ones'
// `carried`).
void SinkTheRest(SegmentsJob& job) {
  std::optional<Piece> open;
  for (size_t task = 0; task < job.carried.size(); ++task) {
    if (std::optional<Piece>& piece = job.carried[task]) {
      if (!open) open = Piece{piece->segment, EmptyStats(job.request.dtype)};
      open->stats = MergeStats(open->stats, piece->stats);
      const uint64_t end = std::min<uint64_t>(job.count, (task + 1) * job.task_elements);
      if (job.Bound(piece->segment + 1) <= end) {
        job.sink(open->segment, std::span<const Stats>(&open->stats, 1));
        open.reset();
      }
    }
    if (job.continuing[task]) open = std::move(job.continuing[task]);
  }
}

// With a sink: the empty segments that start in task `task`'s elements (the last task's also
// those at the end), which no task reduces.
void SinkEmptySegments(SegmentsJob& job, size_t task) {
  const uint64_t begin = task * job.task_elements;
  const size_t segments = job.bounds.size() - 1;
  // The first segment s with Bound(s) >= v: for 0 < v <= count, the first with bounds[s] >=
  // base + v.
  const auto first_at = [&](uint64_t v) -> size_t {
    if (v == 0) return 0;
    return GallopFrom(job.bounds.first(segments), UniformGuess(v, job.count, segments),
                      [&](uint64_t bound) { return bound < job.base + v; });
  };
  const size_t from = first_at(begin);
  const size_t to = task + 1 == job.carried.size()
                        ? segments
                        : std::max(from, first_at(begin + job.task_elements));
  if (from == to) return;
  // Mostly there is none: where every segment lies in `data`, a look at the bounds as they are
  // (without clamping each: 5% of segments of 16's time) finds them.
  const uint64_t* bounds = job.bounds.data();
  if (bounds[from] >= job.base && bounds[to] <= job.base + job.count) {
    bool any = false;
    for (size_t s = from; s < to; ++s) any |= bounds[s] == bounds[s + 1];
    if (!any) return;
  }
  SinkRun run(job.sink);
  for (size_t s = from; s < to; ++s) {
    if (job.Bound(s) == job.Bound(s + 1)) run.Add(s, EmptyStats(job.request.dtype));
  }
}

void RunSegmentsTask(const std::shared_ptr<SegmentsJob>& job, size_t task) {
  std::call_once(job->started_once, [&] { job->started = Clock::now(); });
  const bool no_empty_ones = ReducePieces(*job, task);
  if (job->sink && !no_empty_ones) SinkEmptySegments(*job, task);
  if (job->remaining.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  std::vector<Stats>& segments = job->segments;
  if (job->sink) {
    SinkTheRest(*job);
  } else {
    for (const std::optional<Piece>& piece : job->carried) {
      if (piece) segments[piece->segment] = MergeStats(segments[piece->segment], piece->stats);
    }
  }
  ReduceTiming timing;
  timing.queue = job->started - job->submitted;
  timing.compute = Clock::now() - job->started;
  std::move(job->done)(std::move(segments), timing);
}

}  // namespace

namespace {

void StartSegments(ThreadPool& pool, const StatsRequest& request, std::span<const std::byte> data,
                   std::span<const uint64_t> bounds, uint64_t base, RowSink sink, SegmentsDone done,
                   DirectAnswers direct) {
  auto job = std::make_shared<SegmentsJob>();
  job->request = request;
  job->data = data;
  job->bounds = bounds;
  job->base = base;
  job->count = data.size() / DTypeSize(request.dtype);
  job->task_elements = TaskElements(request.dtype);
  job->sink = std::move(sink);
  if (job->sink) job->direct = direct;
  job->done = std::move(done);
  job->submitted = Clock::now();
  const size_t tasks =
      static_cast<size_t>((job->count + job->task_elements - 1) / job->task_elements);
  const size_t segments = bounds.empty() ? 0 : bounds.size() - 1;
  if (tasks == 0 || bounds.size() < 2) {
    // No elements: every segment (if any) is empty.
    std::vector<Stats> empty(segments, EmptyStats(request.dtype));
    if (job->sink) {
      if (segments > 0) job->sink(0, empty);
      empty.clear();
    }
    std::move(job->done)(std::move(empty), ReduceTiming{});
    return;
  }
  if (!job->sink) job->segments.assign(segments, EmptyStats(request.dtype));
  job->carried.resize(tasks);
  if (job->sink) job->continuing.resize(tasks);
  job->remaining.store(tasks, std::memory_order_relaxed);
  if (tasks == 1) {  // as ReduceAsync: a wake-up would cost more than the task
    RunSegmentsTask(job, 0);
    return;
  }
  for (size_t task = 0; task < tasks; ++task) {
    pool.Submit([job, task] { RunSegmentsTask(job, task); });
  }
}

}  // namespace

void ReduceSegmentsAsync(ThreadPool& pool, const StatsRequest& request,
                         std::span<const std::byte> data, std::span<const uint64_t> bounds,
                         SegmentsDone done) {
  StartSegments(pool, request, data, bounds, 0, nullptr, std::move(done), DirectAnswers{});
}

void ReduceSegmentsAsync(ThreadPool& pool, const StatsRequest& request,
                         std::span<const std::byte> data, std::span<const uint64_t> bounds,
                         uint64_t base, RowSink sink, SegmentsDone done, DirectAnswers direct) {
  StartSegments(pool, request, data, bounds, base, std::move(sink), std::move(done), direct);
}

std::vector<Stats> ReduceSegments(ThreadPool& pool, const StatsRequest& request,
                                  std::span<const std::byte> data,
                                  std::span<const uint64_t> bounds) {
  std::promise<std::vector<Stats>> result;
  ReduceSegmentsAsync(pool, request, data, bounds,
                      [&result](std::vector<Stats> segments, ReduceTiming) {
                        result.set_value(std::move(segments));
                      });
  return result.get_future().get();
}

}  // namespace gpureduce::kernels::cpu
