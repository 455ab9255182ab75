#include "runtime/backend.h"

#include "absl/strings/str_cat.h"

namespace gpureduce::runtime {

std::vector<const kernels::KernelInfo*> Backend::Kernels() const {
  std::vector<const kernels::KernelInfo*> kernels;
  for (const kernels::KernelInfo& kernel : kernels::AllKernels()) {
    if (kernel.backend == kind()) kernels.push_back(&kernel);
  }
  return kernels;
}

absl::StatusOr<OpenedDeviceMemory> Backend::OpenIpcHandle(std::span<const std::byte> handle,
                                                          int device) {
  (void)handle;
  return absl::FailedPreconditionError(
      absl::StrCat("CUDA shared memory needs the CUDA backend; this server runs the ",
                   kernels::BackendName(kind()), " backend, which owns no GPU ", device));
}

}  // namespace gpureduce::runtime
