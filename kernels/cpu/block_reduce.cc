// ReduceBlock (kernels/reduce.h): the passes of block_reduce.h that a request's needs call for,
// over one block, with the fastest copy of the passes this CPU runs.

#include "kernels/cpu/block_reduce.h"

#include <vector>

#include "kernels/cpu/element_load.h"
#include "kernels/reduce.h"

namespace gpureduce::kernels::cpu {
namespace {

// The first NaN's offset in a block of floats (called only when it holds one and no pass noted
// where).
int64_t FirstNan(DType dtype, const std::byte* data, size_t size) {
  return baseline::DispatchLoadDType(dtype, [&]<DType kDType>() -> int64_t {
    using Storage = typename baseline::Element<kDType>::Storage;
    return baseline::FirstNanOf<kDType>(reinterpret_cast<const Storage*>(data), size);
  });
}

}  // namespace

std::vector<const Passes*> RunnablePasses() {
  std::vector<const Passes*> runnable = {&baseline::kPasses};
#if GPUREDUCE_CPU_HAVE_AVX2
  __builtin_cpu_init();
  // Exactly the extensions each copy was compiled for (kernels/CMakeLists.txt). Clang 14 cannot
  // ask for F16C, which every AVX2 CPU has (Intel since Ivy Bridge, AMD since Piledriver, both
  // before their AVX2). libgcc and compiler-rt report AVX-512 only where the OS saves its state.
  bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
              __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
#if !defined(__clang__)
  avx2 = avx2 && __builtin_cpu_supports("f16c");
#endif
  if (!avx2) return runnable;
  runnable.push_back(&avx2::kPasses);
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")) {
    runnable.push_back(&avx512::kPasses);
  }
#endif
  return runnable;
}

std::vector<Passes> EveryPassesPath() {
  std::vector<Passes> paths;
  for (const Passes* passes : RunnablePasses()) paths.push_back(*passes);
#if GPUREDUCE_CPU_HAVE_AVX2
  if (paths.size() == 3) {
    Passes wide = avx512::kPasses;
    wide.add_sums = avx512::AddSums;
    paths.push_back(wide);
  }
#endif
  return paths;
}

const Passes& ChosenPasses() {
  static const Passes* const passes = RunnablePasses().back();
  return *passes;
}

// 16-bit floats are reduced in place, each pass converting as it loads, over the whole block.
// Measured on the dev machine (one core, 256 MiB, AVX2), with the sums pass's NaN-free loop:
// float16 SUM 7.9 -> 19.6 GB/s, bfloat16 8.0 -> 17.7; VAR 6.3 -> 11.4 and 11.9; the five-op
// request 4.1 -> 5.9 and 4.4 -> 6.2. In one piece rather than tiles widened to float32, whose
// extremes each started anew (a scan of a run for each new one): one core of the AMD VM, the
// AVX-512 copy (whose extremes pass is the AVX2 one), the five-op request of float16 10.5 -> 14.8
// GB/s, bfloat16 11.1 -> 13.1, MIN 15.6 -> 24.9 (with the keys of narrow_keys.h). PROD's pass
// read such tiles until the sixteenth session (one core of the dev VM, 64 MiB: float16 PROD 2.4
// -> 7.1 GB/s, float32 3.6 -> 9.9, each with its NaN counted by the product pass).
Stats ReduceBlockWith(const Passes& passes, const StatsRequest& request,
                      std::span<const std::byte> bytes, uint64_t base_index) {
  const DType dtype = request.dtype;
  const StatsNeeds& needs = request.needs;
  const size_t size = bytes.size() / DTypeSize(dtype);
  const std::byte* data = bytes.data();
  Stats stats;
  stats.count = size;
  stats.integer = IsInteger(dtype);
  if (size == 0) return stats;

  // The sums and the extremes passes count a float block's NaNs, and the product pass where
  // neither runs (a request of none of them, rare, runs the sums pass to count them). A request of
  // both runs them as one fused pass (integers too since issue 22's third round; measured in CPU
  // time, one core, 256 KiB in L2, AVX2, before the fused pass compared float32 elements on float32
  // vectors: the five-op request of float64 at 15.1 GB/s apart and 17.3 fused; 256 MiB of float16
  // at 4.3 apart and 5.0 fused, where each pass converts the elements again; float32 then ran
  // apart, 10.6 against 8.9 fused, and now gains: 14.4 apart, 18.8 fused, 256 MiB on the 2-core AMD
  // VM).
  const bool sums = needs.sum || needs.sum_squares || needs.moments;
  const bool extremes = needs.min || needs.max;
  const bool fuse = sums && extremes;
  if (sums || (!extremes && !needs.prod && !stats.integer)) {
    passes.add_sums(dtype, needs, fuse, data, size, base_index, stats);
  }
  if (extremes && !fuse) {
    passes.add_extremes(dtype, needs.min, needs.max, data, size, base_index, stats);
  }
  if (needs.prod) passes.add_product(dtype, data, size, !sums && !extremes, stats);
  if (stats.nan_count > 0 && stats.first_nan < 0) {  // a pass may have found it
    stats.first_nan = static_cast<int64_t>(base_index) + FirstNan(dtype, data, size);
  }
  return stats;
}

Stats ReduceBlock(const StatsRequest& request, std::span<const std::byte> bytes,
                  uint64_t base_index) {
  return ReduceBlockWith(ChosenPasses(), request, bytes, base_index);
}

}  // namespace gpureduce::kernels::cpu
