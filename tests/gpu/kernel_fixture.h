#pragma once

// What the tests that call GPU kernels directly (no runtime, no server) share: a skip with the
// reason where there is no GPU, device 0's traits as the runtime would read them, a stream and a
// running partial on the device.

#include <cuda_runtime_api.h>

#include <cstddef>

#include "common/reduction/op.h"
#include "common/reduction/partial.h"
#include "gtest/gtest.h"
#include "kernels/gpu_traits.h"

namespace gpureduce::testing {

// The error bound of the kernels that accumulate in float64 (single_pass, cub) over n elements,
// relative to the reference's scale: SUM, MEAN, SUM_SQUARES 1e-9 (the accuracy goal); PROD
// n * 2^-53 (the rigorous bound of a float64 product); MIN, MAX, ARGMIN, ARGMAX exact.
double Float64KernelBound(gpureduce::Op op, size_t n);

class KernelFixture : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Resets the running partial to the empty one (synchronously).
  void ResetRunning();
  // Waits for the stream, then reads the running partial back; the CUDA error, if any.
  cudaError_t ReadRunning(gpureduce::Partial* partial);

  kernels::GpuTraits gpu_;
  cudaStream_t stream_ = nullptr;
  gpureduce::Partial* d_running_ = nullptr;
};

}  // namespace gpureduce::testing
