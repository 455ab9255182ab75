#include "runtime/backend.h"

#include "absl/strings/str_cat.h"

namespace gpureduce::runtime {

std::vector<const kernels::KernelInfo*> Backend::Kernels() const {
  std::vector<const kernels::KernelInfo*> own;
  std::vector<const kernels::KernelInfo*> others;
  for (const kernels::KernelInfo& kernel : kernels::AllKernels()) {
    if (Runs(kernel)) (kernel.backend == kind() ? own : others).push_back(&kernel);
  }
  own.insert(own.end(), others.begin(), others.end());
  return own;
}

absl::StatusOr<OpenedDeviceMemory> Backend::OpenIpcHandle(std::span<const std::byte> handle,
                                                          int device) {
  (void)handle;
  return absl::FailedPreconditionError(
      absl::StrCat("CUDA shared memory needs the CUDA backend; this server runs the ",
                   kernels::BackendName(kind()), " backend, which owns no GPU ", device));
}

}  // namespace gpureduce::runtime
