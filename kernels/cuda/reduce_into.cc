// kernels::cuda::ReduceInto (kernels/reduce.h): from a catalogue kernel to its implementation.

#include "kernels/cuda/cub_reduce.h"
#include "kernels/cuda/ladder/ladder.h"
#include "kernels/cuda/single_pass/single_pass.h"
#include "kernels/reduce.h"

namespace gpureduce::kernels::cuda {

cudaError_t LayOutScratch(std::byte* d_scratch, size_t* scratch_bytes, size_t max_elements,
                          ScratchLayout* layout) {
  size_t cub_temp_bytes = 0;
  if (cudaError_t error = CubTempBytes(max_elements, &cub_temp_bytes); error != cudaSuccess) {
    return error;
  }
  const ScratchLayout carved = CarveScratch(d_scratch, max_elements, cub_temp_bytes);
  if (d_scratch == nullptr) {
    *scratch_bytes = carved.bytes;
    return cudaSuccess;
  }
  if (*scratch_bytes < carved.bytes) return cudaErrorInvalidValue;
  *layout = carved;
  return cudaSuccess;
}

cudaError_t ReduceInto(const ChunkLaunch& launch, const float* d_in, size_t n, uint64_t base_index,
                       Partial* d_running) {
  switch (launch.kernel) {
    case KernelId::kSinglePass: {
      const SinglePassLaunch single_pass{launch.gpu, launch.scratch.single_pass, launch.stream};
      return SinglePassReduce(single_pass, launch.op, d_in, n, base_index, d_running,
                              !launch.first);
    }
    case KernelId::kCub:
      return CubReduceInto(launch.op, d_in, n, base_index, d_running, launch.scratch.cub,
                           launch.stream, launch.first);
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
                              launch.block_size, launch.gpu, d_running, launch.scratch.ladder,
                              launch.stream, launch.first);
    case KernelId::kCpu:
      break;  // the runtime never sends the CPU's kernel to a GPU
  }
  return cudaErrorInvalidValue;
}

}  // namespace gpureduce::kernels::cuda
