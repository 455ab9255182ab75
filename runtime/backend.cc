#include "runtime/backend.h"

namespace gpureduce::runtime {

std::vector<const kernels::KernelInfo*> Backend::Kernels() const {
  std::vector<const kernels::KernelInfo*> kernels;
  for (const kernels::KernelInfo& kernel : kernels::AllKernels()) {
    if (kernel.backend == kind()) kernels.push_back(&kernel);
  }
  return kernels;
}

}  // namespace gpureduce::runtime
