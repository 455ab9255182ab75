#include "server/cuda/cuda_resources.h"

#include "common/fmt_absl.h"
#include "server/cuda/cuda_status.h"
#include "spdlog/spdlog.h"

namespace gpureduce::server {

void LogCudaDestroyFailure(cudaError_t error, const char* what) {
  spdlog::error("destroying a {} failed: {}", what, cudaGetErrorName(error));
}

absl::StatusOr<CudaStream> CreateStream() {
  cudaStream_t stream = nullptr;
  CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  return CudaStream(stream);
}

absl::StatusOr<CudaEvent> CreateTimingEvent() {
  cudaEvent_t event = nullptr;
  CUDA_RETURN_IF_ERROR(cudaEventCreate(&event));
  return CudaEvent(event);
}

absl::StatusOr<DeviceMemory> AllocateDevice(size_t bytes) {
  void* memory = nullptr;
  CUDA_RETURN_IF_ERROR(cudaMalloc(&memory, bytes));
  return DeviceMemory(memory);
}

absl::StatusOr<PinnedMemory> AllocatePinned(size_t bytes) {
  void* memory = nullptr;
  CUDA_RETURN_IF_ERROR(cudaMallocHost(&memory, bytes));
  return PinnedMemory(memory);
}

}  // namespace gpureduce::server
