// kernels::cuda::ReduceInto (kernels/reduce.h): from a catalogue kernel to its implementation.

#include <algorithm>

#include "kernels/cuda/cub_reduce.h"
#include "kernels/cuda/ladder/ladder.h"
#include "kernels/cuda/single_pass/single_pass.h"
#include "kernels/reduce.h"

namespace gpureduce::kernels::cuda {

cudaError_t ScratchBytes(size_t max_elements, size_t* bytes) {
  size_t cub_bytes = 0;
  if (cudaError_t error = CubTempBytes(max_elements, &cub_bytes); error != cudaSuccess) {
    return error;
  }
  // single_pass keeps its counter and block states at the end, where nothing else writes.
  const size_t shared = std::max(cub_bytes, LadderScratchBytes(max_elements));
  *bytes = (shared + 255) / 256 * 256 + kSinglePassScratchBytes;
  return cudaSuccess;
}

cudaError_t ReduceInto(const ChunkLaunch& launch, const float* d_in, size_t n, uint64_t base_index,
                       Partial* d_running) {
  // The other kernels see only the scratch before single_pass's region, so even a size check
  // of theirs that failed to hold could not reach its counter.
  const size_t shared_bytes = launch.scratch_bytes - kSinglePassScratchBytes;
  switch (launch.kernel) {
    case KernelId::kSinglePass: {
      char* region = static_cast<char*>(launch.d_scratch) + shared_bytes;
      const SinglePassLaunch single_pass{launch.gpu, region, launch.stream};
      return SinglePassReduce(single_pass, launch.op, d_in, n, base_index, d_running,
                              !launch.first);
    }
    case KernelId::kCub:
      return CubReduceInto(launch.op, d_in, n, base_index, d_running, launch.d_scratch,
                           shared_bytes, launch.stream, launch.first);
    case KernelId::kAtomicGlobal:
    case KernelId::kAtomicShared:
    case KernelId::kInterleavedDivergent:
    case KernelId::kInterleavedStrided:
    case KernelId::kSequential:
    case KernelId::kFirstAddLoad:
    case KernelId::kUnrollLastWarp:
    case KernelId::kUnrollComplete:
    case KernelId::kWarpShuffle:
    case KernelId::kGridStride:
      return LadderReduceInto(*FindLadderPolicy(launch.kernel), launch.op, d_in, n,
                              launch.block_size, launch.gpu, d_running, launch.d_scratch,
                              shared_bytes, launch.stream, launch.first);
    case KernelId::kCpu:
      break;  // the runtime never sends the CPU's kernel to a GPU
  }
  return cudaErrorInvalidValue;
}

}  // namespace gpureduce::kernels::cuda
