// The `cpu` kernel on a thread pool (kernels/reduce.h): the array is cut into fixed-size tasks
// whose stats are merged in order by whichever task finishes last; a request of up to 1 MiB runs
// its tasks on its caller when it is a stream's chunk or finds the pool busy (FewTasks).

#include <algorithm>
#include <atomic>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/reduce.h"

namespace gpureduce::kernels::cpu {
namespace {

using Clock = std::chrono::steady_clock;

// Shared by the tasks of one ReduceAsync call; the last task to finish owns the combine.
struct Job {
  StatsRequest request;
  uint64_t count;
  BlockSource source;
  uint64_t base_index;
  StatsDone done;
  std::vector<absl::StatusOr<Stats>> stats;
  std::atomic<size_t> remaining;
  Clock::time_point submitted;
  std::once_flag started_once;
  Clock::time_point started;
};

absl::StatusOr<Stats> ReduceTask(const Job& job, size_t task) {
  const size_t elements = TaskElements(job.request.dtype);
  const uint64_t begin = task * elements;
  const size_t size = static_cast<size_t>(std::min<uint64_t>(elements, job.count - begin));
  absl::StatusOr<std::span<const std::byte>> block = job.source(begin, size);
  if (!block.ok()) return block.status();
  const size_t expected = size * DTypeSize(job.request.dtype);
  if (block->size() != expected) {
    return absl::InternalError(absl::StrCat("block source returned ", block->size(),
                                            " bytes for elements [", begin, ", ", begin + size,
                                            "), expected ", expected));
  }
  return ReduceBlock(job.request, *block, job.base_index + begin);
}

void RunTask(const std::shared_ptr<Job>& job, size_t task) {
  std::call_once(job->started_once, [&] { job->started = Clock::now(); });
  job->stats[task] = ReduceTask(*job, task);
  if (job->remaining.fetch_sub(1, std::memory_order_acq_rel) != 1) return;

  absl::StatusOr<Stats> total = EmptyStats(job->request.dtype);
  for (const absl::StatusOr<Stats>& stats : job->stats) {
    if (!stats.ok()) {
      total = stats.status();
      break;
    }
    total = MergeStats(*total, *stats);
  }
  ReduceTiming timing;
  timing.queue = job->started - job->submitted;
  timing.compute = Clock::now() - job->started;
  std::move(job->done)(std::move(total), timing);
}

}  // namespace

Stats EmptyStats(DType dtype) {
  Stats stats;
  stats.integer = IsInteger(dtype);
  return stats;
}

void ReduceAsync(ThreadPool& pool, const StatsRequest& request, uint64_t count, BlockSource source,
                 uint64_t base_index, StatsDone done, FewTasks few) {
  if (count == 0) {
    std::move(done)(EmptyStats(request.dtype), ReduceTiming{});
    return;
  }
  auto job = std::make_shared<Job>();
  job->request = request;
  job->count = count;
  job->source = std::move(source);
  job->base_index = base_index;
  job->done = std::move(done);
  const size_t elements = TaskElements(request.dtype);
  const size_t tasks = static_cast<size_t>((count + elements - 1) / elements);
  job->stats.resize(tasks);
  job->remaining.store(tasks, std::memory_order_relaxed);
  job->submitted = Clock::now();
  // One task gains nothing from the pool but a thread wake-up (20-60 us measured on the H100
  // host for a 1024-float request). The tasks of up to kMostCallerBytes (a stream's usual chunk)
  // the caller (a gRPC thread with a chunk it just received) runs too when told to (a stream's
  // chunk), or while the pool has tasks waiting (its workers, as a rule, all busy): it saves the
  // hand-overs, reads the chunk where it arrived, and receives no more than it can reduce (H200
  // host, 16 cores, the CPU server beside the sink: 8 streams of 1 MiB chunks 0.72x with the
  // pool while busy, 1.04x on the caller; docs/load.md). A larger request still spreads over the
  // pool. Either way the same tasks merge in the same order: the same bits.
  const bool few_bytes = count * DTypeSize(request.dtype) <= kMostCallerBytes;
  if (tasks == 1 || (few_bytes && (few == FewTasks::kCaller || pool.backlog() > 0))) {
    for (size_t task = 0; task < tasks; ++task) RunTask(job, task);
    return;
  }
  for (size_t task = 0; task < tasks; ++task) {
    pool.Submit([job, task] { RunTask(job, task); });
  }
}

void ReduceAsync(ThreadPool& pool, const StatsRequest& request, std::span<const std::byte> data,
                 uint64_t base_index, StatsDone done, FewTasks few) {
  const size_t element_size = DTypeSize(request.dtype);
  const uint64_t count = data.size() / element_size;
  if (count <= TaskElements(request.dtype)) {
    // The one-task case of the general path (on this thread), without its allocations: this is
    // every small request's path.
    const Clock::time_point start = Clock::now();
    Stats stats = ReduceBlock(request, data, base_index);
    ReduceTiming timing;
    timing.compute = Clock::now() - start;
    std::move(done)(std::move(stats), timing);
    return;
  }
  ReduceAsync(
      pool, request, count,
      [data, element_size](uint64_t begin,
                           size_t size) -> absl::StatusOr<std::span<const std::byte>> {
        return data.subspan(begin * element_size, size * element_size);
      },
      base_index, std::move(done), few);
}

Stats Reduce(ThreadPool& pool, const StatsRequest& request, std::span<const std::byte> data,
             uint64_t base_index) {
  std::promise<Stats> result;
  ReduceAsync(pool, request, data, base_index,
              [&result](absl::StatusOr<Stats> stats, ReduceTiming) {
                // Memory never fails to read: the status is always stats.
                result.set_value(*std::move(stats));
              });
  return result.get_future().get();
}

}  // namespace gpureduce::kernels::cpu
