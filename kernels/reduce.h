#pragma once

// The kernels' one host API. The runtime reduces every chunk through the two entry points below
// (kernels::cpu on a thread pool, kernels::cuda on a stream) and shares the vocabulary the
// headers included here define: ops and their names, partials and their Combine, the kernel
// catalogue with its KernelId, the NaN / first-occurrence order, Finalize. Nothing here knows gRPC
// or protobuf.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <span>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "common/reduction/dtype.h"
#include "common/reduction/finalize.h"
#include "common/reduction/op.h"
#include "common/reduction/op_name.h"
#include "common/reduction/op_result.h"
#include "common/reduction/partial.h"
#include "common/reduction/stats.h"
#include "common/thread_pool.h"
#include "kernels/gpu_traits.h"
#include "kernels/kernel_registry.h"
#include "kernels/scratch_layout.h"

#if GPUREDUCE_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace gpureduce::kernels {

namespace cpu {

// The `cpu` kernel cuts an array into tasks of TaskElements(dtype) elements: 64Ki (256 KiB of
// floats) keeps the per-task overhead under 1% and, being fixed, makes the result depend only on
// the input (not on the thread count): the CPU backend is deterministic. 16-bit floats take tasks
// of the same bytes, 128Ki elements (at 64Ki, 16 threads of the GPU host's Xeon read float16 15-20%
// slower: each task's stream starts anew).
inline constexpr size_t kElementsPerTask = size_t{1} << 16;  // the fewest of any dtype
constexpr size_t TaskElements(DType dtype) {
  return DTypeSize(dtype) == 2 ? 2 * kElementsPerTask : kElementsPerTask;
}
inline constexpr size_t kMostTaskBytes = 8 * kElementsPerTask;  // any dtype's task
static_assert(2 * TaskElements(DType::kFloat16) <= kMostTaskBytes);

// What one reduction computes: the accumulations `needs` asks for (NeedsOf the request's ops),
// over little-endian elements of `dtype`.
struct StatsRequest {
  DType dtype = DType::kFloat32;
  StatsNeeds needs;
};

// The Stats of no elements of `dtype`: what MergeStats starts from, and an empty input's answer.
Stats EmptyStats(DType dtype);

struct ReduceTiming {
  std::chrono::nanoseconds queue{0};    // submit to first task start
  std::chrono::nanoseconds compute{0};  // first task start to last task end
};

using StatsDone = absl::AnyInvocable<void(absl::StatusOr<Stats>, ReduceTiming) &&>;

// The bytes of elements [begin, begin + size) of an input (size is at most TaskElements),
// aligned to the element size, or why they could not be read. The span must stay valid until the
// calling thread next calls the source (a thread-local buffer will do).
using BlockSource =
    std::function<absl::StatusOr<std::span<const std::byte>>(uint64_t begin, size_t size)>;

// Reduces the stats of one block: `bytes` holds whole elements, aligned to their size; they are
// elements base_index.. of the whole array.
Stats ReduceBlock(const StatsRequest& request, std::span<const std::byte> bytes,
                  uint64_t base_index);

// The most bytes whose tasks a caller may run itself (FewTasks): four tasks of float32 or of a
// 16-bit dtype, two of a 64-bit one.
inline constexpr size_t kMostCallerBytes = size_t{1} << 20;

// Who reduces the tasks of an input of up to kMostCallerBytes; one of a single task, and one of
// no elements, are always reduced by the caller.
enum class FewTasks {
  // The pool, unless it has tasks waiting (its workers, as a rule, all busy): a lone request
  // gets the pool's threads in parallel, a busy server saves the hand-overs.
  kPoolUnlessBusy,
  // The caller: one chunk of many (a stream's), whose hand-over to the pool costs more than the
  // parallelism gains, since the transport delivers the next chunk no sooner.
  kCaller,
};

// Reduces `count` elements read through `source` on `pool`: each task reads its block when it
// runs; the last task to finish merges the task stats in order and calls `done` on a pool thread
// (the first block that cannot be read, in task order, is the result). An input the caller takes
// (`few`) is reduced on the calling thread instead, the same tasks in the same order (the same
// bits), and `done` runs there before ReduceAsync returns: a caller must not hold a lock that
// `done` takes.
void ReduceAsync(ThreadPool& pool, const StatsRequest& request, uint64_t count, BlockSource source,
                 uint64_t base_index, StatsDone done, FewTasks few = FewTasks::kPoolUnlessBusy);

// The same over elements in memory (whole elements, aligned to their size), which must stay valid
// until `done`.
void ReduceAsync(ThreadPool& pool, const StatsRequest& request, std::span<const std::byte> data,
                 uint64_t base_index, StatsDone done, FewTasks few = FewTasks::kPoolUnlessBusy);

// Blocking convenience for tests, tools and self-checks; never call it from a pool thread.
Stats Reduce(ThreadPool& pool, const StatsRequest& request, std::span<const std::byte> data,
             uint64_t base_index = 0);

using SegmentsDone = absl::AnyInvocable<void(std::vector<Stats>, ReduceTiming) &&>;

// Reduces each segment of `data` into its own Stats: segment s holds elements [bounds[s],
// bounds[s + 1]) (bounds ascending, from 0 to the element count; an empty segment gets the Stats
// of no elements), its indices counted from the segment's start. The array is cut into
// ReduceAsync's fixed tasks, each reducing the pieces of the segments it holds; a segment cut
// across tasks merges its pieces in order, so the result depends only on the input. `data` and
// `bounds` must stay valid until `done`, which runs on a pool thread (on the caller's before the
// call returns for an input of one task).
void ReduceSegmentsAsync(ThreadPool& pool, const StatsRequest& request,
                         std::span<const std::byte> data, std::span<const uint64_t> bounds,
                         SegmentsDone done);

// Blocking convenience for tests and tools; never call it from a pool thread.
std::vector<Stats> ReduceSegments(ThreadPool& pool, const StatsRequest& request,
                                  std::span<const std::byte> data,
                                  std::span<const uint64_t> bounds);

// A request's ops whose answers go straight into their result arrays: op k's answer of output i
// at ops[k].out + i * DTypeSize(ResultDType(ops[k].op, dtype)), the bytes EncodeAnswers writes
// for it from the output's Stats. The short runs pass writes those it can from its vectors (rows
// and segments of 4 to 512 elements, eight at a time, PROD alone or no PROD among the ops, where
// the CPU has AVX-512; of int64, one op but SUM_SQUARES; not eight that hold an output an op
// refuses or an int64 SUM that wraps, nor an integer PROD that leaves int64 without `overflows`);
// the other outputs' Stats still go to the sink.
struct DirectAnswer {
  Op op = Op::kSum;
  std::byte* out = nullptr;
  // Where the answers it writes that left int64 are counted (EncodedAnswers::overflows), from
  // several tasks at once; nullptr: such answers are left to the Stats.
  std::atomic<uint64_t>* overflows = nullptr;
};
struct DirectAnswers {
  static constexpr size_t kMostOps = std::size(kAllOps);  // a request names each op once
  double ddof = 0.0;
  size_t count = 0;  // 0: none, every output's Stats to the sink
  DirectAnswer ops[kMostOps];

  bool empty() const { return count == 0; }
  // Op's answers from out on (output 0's); false, and nothing added, past kMostOps.
  bool Add(Op op, std::byte* out, std::atomic<uint64_t>* overflows = nullptr) {
    if (count == kMostOps) return false;
    ops[count++] = {op, out, overflows};
    return true;
  }
};

using ColumnsDone = absl::AnyInvocable<void(ReduceTiming) &&>;
using RowsDone = absl::AnyInvocable<void(ReduceTiming) &&>;
// Takes the Stats of rows first .. first + stats.size() - 1 (a run of them, so that the answers
// are finalized many at a time); called from pool threads at once, for distinct rows.
using RowSink = std::function<void(uint64_t first, std::span<const Stats> stats)>;

// Reduces each row of a row-major table (NumPy's axis=-1): `data` holds whole rows of `length`
// elements, and row r's Stats (indices counted from the row's start) go to `sink` from the task
// that reduced it, in no particular order, each once. Short rows are reduced side by side by the
// columns pass, long ones each by ReduceBlock; the result depends only on the input. `data` must
// stay valid until `done`, which runs on a pool thread (on the caller's before the call returns for
// an input of one task), after every row's sink. With `direct`, rows the short runs pass answers
// itself skip the sink.
void ReduceRowsAsync(ThreadPool& pool, const StatsRequest& request, std::span<const std::byte> data,
                     uint64_t length, RowSink sink, RowsDone done, DirectAnswers direct = {});

// ReduceSegmentsAsync with each segment's Stats handed to `sink` (as ReduceRowsAsync's rows)
// instead of returned: a segment that lies whole in one task (or an empty one starting there)
// from that task, in parallel; one cut across tasks from the task that finishes last, before
// `done`, whose vector is then empty. Each segment once, with the same Stats as
// ReduceSegmentsAsync's. `bounds` count from an array `data` begins `base` elements into (a
// request's own bounds, not rebased for each batch): segment s holds the elements of `data`
// from bounds[s] - base to bounds[s + 1] - base, each clamped to data's ends (so the first may
// have begun before it and the last go on after it; one wholly outside it counts as empty).
// With `direct` (segment s's answers as output s's), whole segments the short runs pass answers
// itself skip the sink.
void ReduceSegmentsAsync(ThreadPool& pool, const StatsRequest& request,
                         std::span<const std::byte> data, std::span<const uint64_t> bounds,
                         uint64_t base, RowSink sink, SegmentsDone done, DirectAnswers direct = {});

// Reduces a row-major table down its columns (NumPy's axis=0): `data` holds `rows` rows of
// columns.size() elements, row r's indices are base_row + r, and column c's elements merge into
// columns[c] after what it holds (a stream's earlier rows). Tasks take tiles of columns (a narrow
// table's blocks of rows too), so the result depends only on the input. `data` and `columns` must
// stay valid until `done`, which runs on a pool thread (on the caller's before the call returns for
// an input of one task).
void ReduceColumnsAsync(ThreadPool& pool, const StatsRequest& request,
                        std::span<const std::byte> data, uint64_t rows, std::span<Stats> columns,
                        uint64_t base_row, ColumnsDone done);

// Blocking convenience for tests and tools; never call it from a pool thread.
void ReduceColumns(ThreadPool& pool, const StatsRequest& request, std::span<const std::byte> data,
                   uint64_t rows, std::span<Stats> columns, uint64_t base_row = 0);

}  // namespace cpu

#if GPUREDUCE_HAVE_CUDA
namespace cuda {

// One chunk's launch: which kernel, on which stream, with which scratch.
struct ChunkLaunch {
  KernelId kernel;        // a GPU kernel of the catalogue
  Op op;                  // one the kernel supports (ValidateOp)
  uint32_t block_size;    // 0: the kernel's default; else one ValidateBlockSize accepts
  GpuTraits gpu;          // of the device `stream` belongs to
  ScratchLayout scratch;  // the stream's, from LayOutScratch
  cudaStream_t stream;    // one chunk at a time per scratch: work on it stays in stream order
  // The request's first chunk: its result is stored in *d_running rather than folded into it,
  // so a request needs no reset of its partial before the first chunk.
  bool first = false;
};

// A stream's device scratch for chunks of up to `max_elements`, whatever the kernel, in CUB's
// temp-storage idiom: with d_scratch null, sets *scratch_bytes to the bytes it needs; else lays
// the kernels' arrays over d_scratch[0, *scratch_bytes) into *layout (cudaErrorInvalidValue if
// that is too small). Zero the allocation once: single_pass keeps a counter there that must
// start at zero.
cudaError_t LayOutScratch(std::byte* d_scratch, size_t* scratch_bytes, size_t max_elements,
                          ScratchLayout* layout);

// Reduces d_in[0, n) (n >= 1; elements base_index.. of the whole array) with the launch's kernel
// and folds the result into *d_running (stores it, for the first chunk), asynchronously on the
// launch's stream.
cudaError_t ReduceInto(const ChunkLaunch& launch, const float* d_in, size_t n, uint64_t base_index,
                       Partial* d_running);

// single_pass over any dtype with any ops (the array API): reduces the n elements at d_in (their
// little-endian bytes, aligned to the dtype's size; elements base_index.. of the whole array)
// into *d_running, a Stats in device memory (stored, for the request's first chunk), gathering
// the accumulations `needs` asks for. launch.op is unused; launch.kernel is single_pass.
cudaError_t ReduceStatsInto(const ChunkLaunch& launch, DType dtype, const StatsNeeds& needs,
                            const std::byte* d_in, size_t n, uint64_t base_index, Stats* d_running);

// The array kernels (issue 23; kernels/cuda/segmented/segmented_stats.h), asynchronously on
// `stream`, writing Stats in device memory. Segments: d_out[s] = the Stats of elements
// [d_bounds[s], d_bounds[s + 1]) of d_in (segments + 1 ascending bounds from 0, the last
// `elements`), indices from the segment's start.
cudaError_t ReduceSegmentsInto(cudaStream_t stream, DType dtype, const StatsNeeds& needs,
                               const std::byte* d_in, const uint64_t* d_bounds, uint64_t segments,
                               uint64_t elements, Stats* d_out);

// Columns: d_out[c] = the Stats of column c of the row-major (rows, columns) table at d_in,
// element r's index base_row + r. The rows go in `chunks` chunks (ColumnChunksFor), whose
// partial Stats need chunks * columns Stats at d_partials where chunks > 1.
uint32_t ColumnChunksFor(uint64_t rows, uint64_t columns, const GpuTraits& gpu,
                         uint64_t max_partials);
cudaError_t ReduceColumnsInto(cudaStream_t stream, DType dtype, const StatsNeeds& needs,
                              const std::byte* d_in, uint64_t rows, uint64_t columns,
                              uint64_t base_row, uint32_t chunks, Stats* d_partials, Stats* d_out);

}  // namespace cuda
#endif

}  // namespace gpureduce::kernels
