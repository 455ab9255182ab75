#include "kernels/bench/bench_data.h"

#include <algorithm>
#include <cmath>
#include <cub/device/device_reduce.cuh>
#include <thread>
#include <vector>

namespace gpureduce::bench {
namespace {

__host__ __device__ inline int32_t KAt(uint64_t seed, uint64_t index) {
  uint64_t z = seed + index * 0x9E3779B97F4A7C15ull;  // SplitMix64
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<int32_t>(z >> 40) - (1 << 23);  // [-2^23, 2^23)
}

__host__ __device__ inline float ValueAt(uint64_t seed, uint64_t index) {
  return static_cast<float>(KAt(seed, index)) * (1.0f / 8388608.0f);
}

__global__ void Fill(float* out, size_t n, size_t stride, uint64_t seed) {
  for (size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    out[i] = ValueAt(seed, i % stride);
  }
}

// Block b reads tiles b, b + grid, ... of 256 threads x 4 float4 (16 KiB contiguous), every
// load of a tile in flight at once.
__global__ void __launch_bounds__(256)
    ReadAllKernel(const float4* __restrict__ in, size_t vectors, float* sink) {
  constexpr unsigned kThreads = 256, kUnroll = 4;
  constexpr size_t kTile = size_t{kThreads} * kUnroll;
  float acc = 0;
  for (size_t tile = blockIdx.x; tile * kTile < vectors; tile += gridDim.x) {
    const size_t first = tile * kTile + threadIdx.x;
    float4 x[kUnroll];
#pragma unroll
    for (unsigned k = 0; k < kUnroll; ++k) {
      x[k] = first + k * kThreads < vectors ? __ldcs(in + first + k * kThreads) : float4{};
    }
#pragma unroll
    for (unsigned k = 0; k < kUnroll; ++k) acc += (x[k].x + x[k].y) + (x[k].z + x[k].w);
  }
  // One store per block keeps the loads alive without a reduction worth measuring.
  __shared__ float block_acc;
  if (threadIdx.x == 0) block_acc = 0;
  __syncthreads();
  atomicAdd(&block_acc, acc);
  __syncthreads();
  if (threadIdx.x == 0) sink[blockIdx.x] = block_acc;
}

}  // namespace

cudaError_t FillDevice(float* d_out, size_t n, size_t stride, uint64_t seed, cudaStream_t stream) {
  Fill<<<4096, 256, 0, stream>>>(d_out, n, stride, seed);
  return cudaGetLastError();
}

HostSummary Summarize(size_t first, size_t n, uint64_t seed) {
  const size_t workers = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  const size_t share = (n + workers - 1) / workers;
  struct Part {
    int64_t k_sum = 0, k_abs_sum = 0;
    int32_t k_min = INT32_MAX, k_max = INT32_MIN;
    int64_t argmin = -1, argmax = -1;
  };
  std::vector<Part> parts(workers);
  std::vector<std::thread> threads;
  for (size_t w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      Part& part = parts[w];
      const size_t begin = std::min(n, w * share), end = std::min(n, begin + share);
      for (size_t i = begin; i < end; ++i) {
        const int32_t k = KAt(seed, first + i);
        part.k_sum += k;
        part.k_abs_sum += k < 0 ? -int64_t{k} : k;
        if (k < part.k_min) part.k_min = k, part.argmin = static_cast<int64_t>(i);
        if (k > part.k_max) part.k_max = k, part.argmax = static_cast<int64_t>(i);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  Part total;
  for (const Part& part : parts) {  // in index order: the first occurrence wins ties
    if (part.argmin < 0) continue;
    total.k_sum += part.k_sum;
    total.k_abs_sum += part.k_abs_sum;
    if (part.k_min < total.k_min) total.k_min = part.k_min, total.argmin = part.argmin;
    if (part.k_max > total.k_max) total.k_max = part.k_max, total.argmax = part.argmax;
  }
  constexpr double kScale = 1.0 / 8388608.0;
  return HostSummary{double(total.k_sum) * kScale,
                     double(total.k_abs_sum) * kScale,
                     float(double(total.k_min) * kScale),
                     float(double(total.k_max) * kScale),
                     total.argmin,
                     total.argmax};
}

namespace {

// One CUB call per op; a null d_temp asks for the temp size in temp_bytes.
cudaError_t CubDispatch(gpureduce::Op op, const float* d_in, size_t n, float* d_value,
                        int64_t* d_index, void* d_temp, size_t& temp_bytes, cudaStream_t stream) {
  const auto items = static_cast<int64_t>(n);
  switch (op) {
    case gpureduce::Op::kSum:
      return cub::DeviceReduce::Sum(d_temp, temp_bytes, d_in, d_value, items, stream);
    case gpureduce::Op::kMin:
      return cub::DeviceReduce::Min(d_temp, temp_bytes, d_in, d_value, items, stream);
    case gpureduce::Op::kMax:
      return cub::DeviceReduce::Max(d_temp, temp_bytes, d_in, d_value, items, stream);
    case gpureduce::Op::kArgMin:
      return cub::DeviceReduce::ArgMin(d_temp, temp_bytes, d_in, d_value, d_index, items, stream);
    case gpureduce::Op::kArgMax:
      return cub::DeviceReduce::ArgMax(d_temp, temp_bytes, d_in, d_value, d_index, items, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t CubReduce(gpureduce::Op op, const float* d_in, size_t n, void* d_scratch,
                      size_t scratch_bytes, cudaStream_t stream) {
  char* scratch = static_cast<char*>(d_scratch);
  size_t temp_bytes = scratch_bytes - kCubResultBytes;
  return CubDispatch(op, d_in, n, reinterpret_cast<float*>(scratch),
                     reinterpret_cast<int64_t*>(scratch + 8), scratch + kCubResultBytes, temp_bytes,
                     stream);
}

cudaError_t CubScratchBytes(size_t n, size_t* bytes) {
  size_t most = 0;
  for (gpureduce::Op op : kCubOps) {
    size_t temp = 0;
    if (cudaError_t error = CubDispatch(op, nullptr, n, nullptr, nullptr, nullptr, temp, 0);
        error != cudaSuccess) {
      return error;
    }
    most = std::max(most, temp);
  }
  *bytes = kCubResultBytes + most;
  return cudaSuccess;
}

cudaError_t ReadAll(const float* d_in, size_t n, int blocks, float* d_sink, cudaStream_t stream) {
  ReadAllKernel<<<blocks, 256, 0, stream>>>(reinterpret_cast<const float4*>(d_in), n / 4, d_sink);
  return cudaGetLastError();
}

}  // namespace gpureduce::bench
