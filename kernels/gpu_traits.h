#pragma once

// What the GPU kernels' dispatch needs to know of a device: grid sizes follow its multiprocessors
// and resident threads, tuning policies its compute capability. The runtime reads it once per
// device. Plain C++, so host code without CUDA includes it too.

namespace gpureduce::kernels {

struct GpuTraits {
  int multiprocessors = 1;
  int max_threads_per_multiprocessor = 2048;  // 2048 on sm_80 and sm_90, 1536 on sm_86/sm_89
  int compute_capability = 90;                // major * 10 + minor
};

}  // namespace gpureduce::kernels
