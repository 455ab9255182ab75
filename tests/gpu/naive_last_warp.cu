// Test-only: the seeds' last-warp unrolling as they wrote it (volatile shared memory, no
// __syncwarp), which assumes a warp runs in lockstep. Under Volta's independent thread
// scheduling that is a data race; ladder_test shows compute-sanitizer's racecheck reporting it,
// and reporting nothing for the ladder's __syncwarp version.

#include "tests/gpu/naive_last_warp.h"

namespace gpureduce::testing {
namespace {

__global__ void NaiveLastWarpSum(const float* in, float* out) {
  __shared__ float sdata[64];
  const unsigned tid = threadIdx.x;
  sdata[tid] = in[tid];
  __syncthreads();
  if (tid < 32) {
    volatile float* v = sdata;
    v[tid] += v[tid + 32];
    v[tid] += v[tid + 16];
    v[tid] += v[tid + 8];
    v[tid] += v[tid + 4];
    v[tid] += v[tid + 2];
    v[tid] += v[tid + 1];
  }
  if (tid == 0) *out = sdata[0];
}

}  // namespace

cudaError_t LaunchNaiveLastWarpSum(const float* d_in64, float* d_out) {
  NaiveLastWarpSum<<<1, 64>>>(d_in64, d_out);
  return cudaGetLastError();
}

}  // namespace gpureduce::testing
