// Temporary: the stats kernel on a thread pool, one task per block, merged in order (replaced on
// branch i22-cpu).
#include <future>
#include <memory>
#include <mutex>
#include <vector>

#include "kernels/reduce.h"

namespace gpureduce::kernels::cpu {

void ReduceAsync(ThreadPool& pool, const StatsRequest& request, uint64_t count,
                 BlockSource source, uint64_t base_index, StatsDone done) {
  (void)pool;
  absl::StatusOr<Stats> total = Stats{};
  for (uint64_t begin = 0; begin < count; begin += kElementsPerTask) {
    const size_t size = static_cast<size_t>(std::min<uint64_t>(kElementsPerTask, count - begin));
    absl::StatusOr<std::span<const std::byte>> block = source(begin, size);
    if (!block.ok()) {
      total = block.status();
      break;
    }
    total = MergeStats(*total, ReduceBlock(request, *block, base_index + begin));
  }
  std::move(done)(std::move(total), ReduceTiming{});
}

void ReduceAsync(ThreadPool& pool, const StatsRequest& request, std::span<const std::byte> data,
                 uint64_t base_index, StatsDone done) {
  const size_t size = DTypeSize(request.dtype);
  ReduceAsync(
      pool, request, data.size() / size,
      [data, size](uint64_t begin, size_t count) -> absl::StatusOr<std::span<const std::byte>> {
        return data.subspan(begin * size, count * size);
      },
      base_index, std::move(done));
}

Stats Reduce(ThreadPool& pool, const StatsRequest& request, std::span<const std::byte> data,
             uint64_t base_index) {
  std::promise<Stats> result;
  ReduceAsync(pool, request, data, base_index,
              [&result](absl::StatusOr<Stats> stats, ReduceTiming) { result.set_value(*stats); });
  return result.get_future().get();
}

}  // namespace gpureduce::kernels::cpu
