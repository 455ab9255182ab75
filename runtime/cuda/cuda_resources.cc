#include "runtime/cuda/cuda_resources.h"

#include "common/fmt_absl.h"
#include "runtime/cuda/cuda_status.h"
#include "spdlog/spdlog.h"

namespace gpureduce::runtime {

void LogCudaDestroyFailure(cudaError_t error, const char* what) {
  spdlog::error("destroying a {} failed: {}", what, cudaGetErrorName(error));
}

absl::StatusOr<CudaStream> CreateStream(StreamPriority priority) {
  int least = 0, greatest = 0;
  CUDA_RETURN_IF_ERROR(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  cudaStream_t stream = nullptr;
  CUDA_RETURN_IF_ERROR(cudaStreamCreateWithPriority(
      &stream, cudaStreamNonBlocking, priority == StreamPriority::kHigh ? greatest : least));
  return CudaStream(stream);
}

absl::StatusOr<CudaEvent> CreateTimingEvent() {
  cudaEvent_t event = nullptr;
  CUDA_RETURN_IF_ERROR(cudaEventCreate(&event));
  return CudaEvent(event);
}

std::chrono::nanoseconds ElapsedBetween(const CudaEvent& from, const CudaEvent& to) {
  float ms = 0;
  if (cudaEventElapsedTime(&ms, from.get(), to.get()) != cudaSuccess) return {};
  return std::chrono::nanoseconds(static_cast<int64_t>(ms * 1e6));
}

namespace internal {

absl::StatusOr<void*> AllocateDeviceBytes(size_t bytes) {
  void* memory = nullptr;
  CUDA_RETURN_IF_ERROR(cudaMalloc(&memory, bytes));
  return memory;
}

absl::StatusOr<void*> AllocatePinnedBytes(size_t bytes) {
  void* memory = nullptr;
  CUDA_RETURN_IF_ERROR(cudaMallocHost(&memory, bytes));
  return memory;
}

}  // namespace internal

}  // namespace gpureduce::runtime
