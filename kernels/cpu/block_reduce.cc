// ReduceBlock (kernels/reduce.h): the passes of block_reduce.h that a request's needs call for,
// over one block, with the fastest copy of the passes this CPU runs.

#include "kernels/cpu/block_reduce.h"

#include <algorithm>
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

// Widened 16-bit floats, reduced as float32 (every value exact), in tiles small enough that the
// float32 copy stays in L1/L2: PROD's path (the passes read the others in place). Widening a
// tile only reads memory and reducing it only computes, so the next tile's elements are prefetched
// before the current one is reduced: the two then overlap as they do in one pass over float32
// (measured on the dev machine, one core, 256 MiB of float16: 5.5 GB/s with 64Ki-element tiles and
// no prefetch, 7.1 GB/s so; 4Ki and 16Ki tiles did no better).
constexpr size_t kWidenTile = 8192;

Stats ReducePasses(const Passes& passes, const StatsRequest& request,
                   std::span<const std::byte> bytes, uint64_t base_index);

Stats ReduceWidened(const Passes& passes, const StatsRequest& request,
                    std::span<const std::byte> bytes, uint64_t base_index) {
  thread_local std::vector<float> widened(kWidenTile);
  const size_t size = bytes.size() / 2;
  const auto* in = reinterpret_cast<const uint16_t*>(bytes.data());
  Stats stats;
  for (size_t begin = 0; begin < size; begin += kWidenTile) {
    const size_t tile = std::min(kWidenTile, size - begin);
    passes.widen(request.dtype == DType::kFloat16, in + begin, tile, widened.data());
    const size_t next = std::min(kWidenTile, size - begin - tile);
    for (size_t k = 0; k < next; k += 32) __builtin_prefetch(in + begin + tile + k);
    stats =
        MergeStats(stats, ReducePasses(passes, {DType::kFloat32, request.needs},
                                       std::as_bytes(std::span<const float>(widened.data(), tile)),
                                       base_index + begin));
  }
  return stats;
}

}  // namespace

// 16-bit floats are reduced in place, each pass converting as it loads, over the whole block,
// except for PROD, whose pass reads float32 (ReduceWidened). Measured on the dev machine (one core,
// 256 MiB, AVX2), with the sums pass's NaN-free loop: float16 SUM 7.9 -> 19.6 GB/s, bfloat16 8.0
// -> 17.7; VAR 6.3 -> 11.4 and 11.9; the five-op request 4.1 -> 5.9 and 4.4 -> 6.2. In one piece
// rather than the widened path's tiles, whose extremes each started anew (a scan of a run for each
// new one): one core of the AMD VM, the AVX-512 copy (whose extremes pass is the AVX2 one), the
// five-op request of float16 10.5 -> 14.8 GB/s, bfloat16 11.1 -> 13.1, MIN 15.6 -> 24.9 (with the
// keys of narrow_keys.h). A request with PROD reads float32 tiles: its sums' last bits may differ
// from the same request's without PROD (both within the contract's float64 accumulation).
Stats ReduceBlockWith(const Passes& passes, const StatsRequest& request,
                      std::span<const std::byte> bytes, uint64_t base_index) {
  const bool narrow = request.dtype == DType::kFloat16 || request.dtype == DType::kBFloat16;
  if (narrow && request.needs.prod) return ReduceWidened(passes, request, bytes, base_index);
  return ReducePasses(passes, request, bytes, base_index);
}

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

namespace {

// The passes over one block (or one tile of 16-bit floats).
Stats ReducePasses(const Passes& passes, const StatsRequest& request,
                   std::span<const std::byte> bytes, uint64_t base_index) {
  const DType dtype = request.dtype;
  const StatsNeeds& needs = request.needs;
  const size_t size = bytes.size() / DTypeSize(dtype);
  const std::byte* data = bytes.data();
  Stats stats;
  stats.count = size;
  stats.integer = IsInteger(dtype);
  if (size == 0) return stats;

  // The sums and the extremes passes count a float block's NaNs; a request of neither (PROD
  // alone) runs the sums pass to count them. A request of both runs them as one fused pass
  // (integers too since issue 22's third round; measured in CPU time, one core, 256 KiB in L2,
  // AVX2, before the fused pass compared float32 elements on float32 vectors: the five-op request
  // of float64 at 15.1 GB/s apart and 17.3 fused; 256 MiB of float16 at 4.3 apart and 5.0 fused,
  // where each pass converts the elements again; float32 then ran apart, 10.6 against 8.9 fused,
  // and now gains: 14.4 apart, 18.8 fused, 256 MiB on the 2-core AMD VM).
  const bool sums = needs.sum || needs.sum_squares || needs.moments;
  const bool extremes = needs.min || needs.max;
  const bool fuse = sums && extremes;
  if (sums || (!extremes && !stats.integer)) {
    passes.add_sums(dtype, needs, fuse, data, size, base_index, stats);
  }
  if (extremes && !fuse) {
    passes.add_extremes(dtype, needs.min, needs.max, data, size, base_index, stats);
  }
  if (stats.nan_count > 0 && stats.first_nan < 0) {  // a pass may have found it
    stats.first_nan = static_cast<int64_t>(base_index) + FirstNan(dtype, data, size);
  }
  if (needs.prod) passes.add_product(dtype, data, size, stats);
  return stats;
}

}  // namespace

Stats ReduceBlock(const StatsRequest& request, std::span<const std::byte> bytes,
                  uint64_t base_index) {
  return ReduceBlockWith(ChosenPasses(), request, bytes, base_index);
}

}  // namespace gpureduce::kernels::cpu
