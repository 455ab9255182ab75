#pragma once

// Spreads one reduction over a ThreadPool without blocking the caller: the array is cut into
// fixed-size tasks whose partials are combined in order by whichever task finishes last.

#include <chrono>
#include <cstdint>
#include <span>

#include "absl/functional/any_invocable.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/op.h"
#include "kernels/partial.h"

namespace gpureduce::kernels::cpu {

// Elements per task: 256 KiB of floats keeps per-task overhead under 1% and, being fixed, makes
// the result depend only on the input (not on the thread count): the CPU backend is deterministic.
inline constexpr size_t kElementsPerTask = size_t{1} << 16;

struct ReduceTiming {
  std::chrono::nanoseconds queue{0};    // submit to first task start
  std::chrono::nanoseconds compute{0};  // first task start to last task end
};

using ReduceDone = absl::AnyInvocable<void(Partial, ReduceTiming) &&>;

// `data` must stay valid until `done` runs; `done` runs on a pool thread (or inline for empty
// input). Indices in the result are offset by `base_index`.
void ReduceAsync(ThreadPool& pool, Op op, std::span<const float> data, uint64_t base_index,
                 ReduceDone done);

// Blocking convenience for tests and tools; never call it from a pool thread.
Partial Reduce(ThreadPool& pool, Op op, std::span<const float> data, uint64_t base_index = 0);

}  // namespace gpureduce::kernels::cpu
