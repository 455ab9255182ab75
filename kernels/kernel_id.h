#pragma once

// Every kernel gpureduce knows, as the catalogue (kernel_registry.h) and the dispatch name it.
// Plain C++ with no dependencies, so policies and CUDA sources include it too. A request's kernel
// is resolved from its name once, at the server's edge; from there on only the id travels.

namespace gpureduce::kernels {

enum class KernelId : int {
  kCpu,         // the CPU backend's kernel
  kSinglePass,  // the production GPU kernel
  kCub,         // CUB's DeviceReduce, for comparison
  // The ladder of the seed documents, in order (ladder_policy.h).
  kAtomicGlobal,
  kAtomicShared,
  kInterleavedDivergent,
  kInterleavedStrided,
  kSequential,
  kFirstAddLoad,
  kUnrollLastWarp,
  kUnrollComplete,
  kWarpShuffle,
  kGridStride,
};

// The teaching ladder's variants, as opposed to the production kernels.
constexpr bool IsLadderKernel(KernelId id) {
  return static_cast<int>(id) >= static_cast<int>(KernelId::kAtomicGlobal);
}

}  // namespace gpureduce::kernels
