#pragma once

// Dispatch from a catalogue kernel to its CUDA implementation: every GPU kernel reduces a chunk
// and folds the result into the request's running Partial, in stream order.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/kernel_registry.h"
#include "kernels/partial.h"

namespace gpureduce::kernels::cuda {

struct ChunkLaunch {
  const KernelInfo* kernel;
  Op op;
  uint32_t block_size;   // 0: the kernel's default
  int multiprocessors;   // of the device, for kernels that size their grid to it
  void* d_scratch;
  size_t scratch_bytes;
  cudaStream_t stream;
};

// Scratch one stream needs for chunks of up to `max_elements`, whatever the kernel. Zero it once
// after allocating it: single_pass keeps a counter there that must start at zero.
cudaError_t ScratchBytes(size_t max_elements, size_t* bytes);

// Reduces d_in[0, n) (n >= 1; elements base_index.. of the whole array) into *d_running.
cudaError_t ReduceInto(const ChunkLaunch& launch, const float* d_in, size_t n,
                       uint64_t base_index, Partial* d_running);

}  // namespace gpureduce::kernels::cuda
