#include "kernels/cuda/ladder/ladder.h"

#include <algorithm>

#include "kernels/cuda/ladder/atomic_kernels.cuh"
#include "kernels/cuda/ladder/warp_kernels.cuh"
#include "kernels/op_dispatch.h"

namespace gpureduce::kernels::cuda {
namespace {

template <CombineKind kC>
__global__ void SetIdentity(float* value) {
  *value = CombineOp<kC>::Identity();
}

__global__ void FoldFloat(Op op, const float* value, uint64_t n, Partial* running, bool store) {
  Partial chunk;
  chunk.value = *value;
  chunk.count = n;
  *running = store ? chunk : Combine(op, *running, chunk);
}

template <CombineKind kC, unsigned kBlockSize>
void LaunchUnrollComplete(unsigned grid, const float* in, size_t n, bool square, float* out,
                          cudaStream_t stream) {
  UnrollCompleteKernel<kC, kBlockSize>
      <<<grid, kBlockSize, kBlockSize * sizeof(float), stream>>>(in, n, square, out);
}

// One pass of a tree variant: block partials of in[0, n) into out[0, grid).
template <CombineKind kC>
void LaunchTreePass(KernelId variant, unsigned grid, unsigned block, const float* in, size_t n,
                    bool square, float* out, cudaStream_t stream) {
  const size_t shared = block * sizeof(float);
  switch (variant) {
    case KernelId::kInterleavedDivergent:
      InterleavedDivergentKernel<kC><<<grid, block, shared, stream>>>(in, n, square, out);
      return;
    case KernelId::kInterleavedStrided:
      InterleavedStridedKernel<kC><<<grid, block, shared, stream>>>(in, n, square, out);
      return;
    case KernelId::kSequential:
      SequentialKernel<kC><<<grid, block, shared, stream>>>(in, n, square, out);
      return;
    case KernelId::kFirstAddLoad:
      FirstAddLoadKernel<kC><<<grid, block, shared, stream>>>(in, n, square, out);
      return;
    case KernelId::kUnrollLastWarp:
      UnrollLastWarpKernel<kC><<<grid, block, shared, stream>>>(in, n, square, out);
      return;
    case KernelId::kUnrollComplete:
      switch (block) {
        case 64:
          return LaunchUnrollComplete<kC, 64>(grid, in, n, square, out, stream);
        case 128:
          return LaunchUnrollComplete<kC, 128>(grid, in, n, square, out, stream);
        case 256:
          return LaunchUnrollComplete<kC, 256>(grid, in, n, square, out, stream);
        case 512:
          return LaunchUnrollComplete<kC, 512>(grid, in, n, square, out, stream);
        default:
          return LaunchUnrollComplete<kC, 1024>(grid, in, n, square, out, stream);
      }
    case KernelId::kWarpShuffle:
      WarpShuffleKernel<kC><<<grid, block, shared, stream>>>(in, n, square, out);
      return;
    default:
      GridStrideKernel<kC><<<grid, block, shared, stream>>>(in, n, square, out);
      return;
  }
}

// The blocks a pass over m values launches. grid_stride fills every SM once: as many blocks
// as the SM holds threads (2048 on Hopper and the A100, 1536 on Ada).
unsigned PassGrid(const LadderPolicy& policy, size_t m, unsigned block, const GpuTraits& gpu) {
  const size_t per_block = size_t{block} * policy.loads_per_thread;
  size_t grid = (m + per_block - 1) / per_block;
  if (policy.id == KernelId::kGridStride) {
    const size_t per_sm = std::max<size_t>(1, size_t(gpu.max_threads_per_multiprocessor) / block);
    grid = std::min<size_t>(grid, size_t(std::max(1, gpu.multiprocessors)) * per_sm);
  }
  return static_cast<unsigned>(std::max<size_t>(grid, 1));
}

template <CombineKind kC>
cudaError_t Run(const LadderPolicy& policy, const float* in, size_t n, bool square, unsigned block,
                const GpuTraits& gpu, float* result, float* partials_a, float* partials_b,
                cudaStream_t stream) {
  if (policy.id == KernelId::kAtomicGlobal || policy.id == KernelId::kAtomicShared) {
    SetIdentity<kC><<<1, 1, 0, stream>>>(result);
    const unsigned grid = static_cast<unsigned>((n + block - 1) / block);
    if (policy.id == KernelId::kAtomicGlobal) {
      AtomicGlobalKernel<kC><<<grid, block, 0, stream>>>(in, n, square, result);
    } else {
      AtomicSharedKernel<kC><<<grid, block, 0, stream>>>(in, n, square, result);
    }
    return cudaGetLastError();
  }
  // Tree variants: passes over block partials until one value is left (the CUDA samples'
  // second pass; grid_stride's second pass is a single block).
  size_t m = n;
  const float* src = in;
  float* dst = partials_a;
  bool first = true;
  while (true) {
    const unsigned grid = PassGrid(policy, m, block, gpu);
    LaunchTreePass<kC>(policy.id, grid, block, src, m, first && square, grid == 1 ? result : dst,
                       stream);
    if (grid == 1) break;
    m = grid;
    src = dst;
    dst = dst == partials_a ? partials_b : partials_a;
    first = false;
  }
  return cudaGetLastError();
}

// The ladder's combine for each reduction of op_dispatch.h; it has none for ARGMIN and ARGMAX.
template <typename ReductionT>
constexpr CombineKind kCombineFor =
    ReductionT::kKind == ReductionKind::kSum       ? CombineKind::kAdd
    : ReductionT::kKind == ReductionKind::kProduct ? CombineKind::kMul
    : ReductionT::kLess                            ? CombineKind::kMin
                                                   : CombineKind::kMax;

}  // namespace

cudaError_t LadderReduceInto(const LadderPolicy& policy, Op op, const float* d_in, size_t n,
                             uint32_t block_size, const GpuTraits& gpu, Partial* d_running,
                             const LadderScratch& scratch, cudaStream_t stream, bool store) {
  const unsigned block = block_size != 0 ? block_size : policy.default_block_size;
  if (block < policy.min_block_size || block > policy.max_block_size || (block & (block - 1)) ||
      scratch.partials_a.size < LadderPartialsCapacity(n) ||
      scratch.partials_b.size < LadderPartialsCapacity(n)) {
    return cudaErrorInvalidValue;  // the server validates first; this guards the kernels
  }
  const cudaError_t error = DispatchOp(op, cudaErrorInvalidValue, [&](auto reduction) {
    using ReductionT = decltype(reduction);
    if constexpr (ReductionT::kKind == ReductionKind::kArgExtreme) {
      return cudaErrorInvalidValue;  // float32 values only: no variant keeps an index
    } else {
      return Run<kCombineFor<ReductionT>>(policy, d_in, n, ReductionT::kSquares, block, gpu,
                                          scratch.result.d_data, scratch.partials_a.d_data,
                                          scratch.partials_b.d_data, stream);
    }
  });
  if (error != cudaSuccess) return error;
  FoldFloat<<<1, 1, 0, stream>>>(op, scratch.result.d_data, n, d_running, store);
  return cudaGetLastError();
}

}  // namespace gpureduce::kernels::cuda
