#include "kernels/bench/dtype_data.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstring>
#include <cub/device/device_reduce.cuh>
#include <thread>
#include <vector>

namespace gpureduce::bench {
namespace {

// bench_data.cu's values: SplitMix64 of (seed, index), 24 bits signed.
__host__ __device__ inline int32_t KOf(uint64_t seed, uint64_t index) {
  uint64_t z = seed + index * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<int32_t>(z >> 40) - (1 << 23);
}

__host__ __device__ inline int64_t QOf(DType dtype, int32_t k) {
  switch (dtype) {
    case DType::kFloat16:
      return k >> 12;
    case DType::kBFloat16:
      return k >> 15;
    case DType::kInt64:
      return int64_t{k} * (int64_t{1} << 20);
    default:
      return k;
  }
}

template <typename T>
__global__ void FillKernel(T* out, size_t n, size_t stride, uint64_t seed, DType dtype,
                           double scale) {
  for (size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    const int64_t q = QOf(dtype, KOf(seed, i % stride));
    if constexpr (std::is_same_v<T, __half>) {
      out[i] = __double2half(double(q) * scale);
    } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      out[i] = __double2bfloat16(double(q) * scale);
    } else if constexpr (std::is_integral_v<T>) {
      out[i] = static_cast<T>(q);
    } else {
      out[i] = static_cast<T>(double(q) * scale);
    }
  }
}

double ScaleOf(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
    case DType::kFloat64:
      return 0x1p-23;
    case DType::kFloat16:
      return 0x1p-11;
    case DType::kBFloat16:
      return 0x1p-8;
    default:
      return 1;
  }
}

template <typename FunctorT>
cudaError_t WithType(DType dtype, FunctorT&& functor) {
  switch (dtype) {
    case DType::kFloat32:
      return functor(float{});
    case DType::kFloat16:
      return functor(__half{});
    case DType::kBFloat16:
      return functor(__nv_bfloat16{});
    case DType::kFloat64:
      return functor(double{});
    case DType::kInt32:
      return functor(int32_t{});
    case DType::kInt64:
      return functor(int64_t{});
  }
  return cudaErrorInvalidValue;
}

template <typename T>
cudaError_t CubCall(bool min, const T* d_in, size_t n, T* d_out, void* d_temp, size_t& temp,
                    cudaStream_t stream) {
  const auto items = static_cast<int64_t>(n);
  return min ? cub::DeviceReduce::Min(d_temp, temp, d_in, d_out, items, stream)
             : cub::DeviceReduce::Sum(d_temp, temp, d_in, d_out, items, stream);
}

}  // namespace

cudaError_t FillTyped(DType dtype, void* d_out, size_t n, size_t stride, uint64_t seed,
                      cudaStream_t stream) {
  return WithType(dtype, [&](auto type) {
    using T = decltype(type);
    FillKernel<T>
        <<<4096, 256, 0, stream>>>(static_cast<T*>(d_out), n, stride, seed, dtype, ScaleOf(dtype));
    return cudaGetLastError();
  });
}

TypedSummary SummarizeTyped(DType dtype, size_t n, uint64_t seed) {
  const size_t workers = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  const size_t share = (n + workers - 1) / workers;
  std::vector<TypedSummary> parts(workers);
  std::vector<std::thread> threads;
  for (size_t w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      TypedSummary& part = parts[w];
      const size_t begin = std::min(n, w * share), end = std::min(n, begin + share);
      for (size_t i = begin; i < end; ++i) {
        const int64_t q = QOf(dtype, KOf(seed, i));
        part.q_sum += q;
        part.q_abs_sum += q < 0 ? -q : q;
        part.q_square_sum += Int128{q} * q;
        if (part.argmin < 0 || q < part.q_min) part.q_min = q, part.argmin = int64_t(i);
        if (part.argmax < 0 || q > part.q_max) part.q_max = q, part.argmax = int64_t(i);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  TypedSummary total;
  total.scale = ScaleOf(dtype);
  for (const TypedSummary& part : parts) {  // in index order: the first occurrence wins ties
    if (part.argmin < 0) continue;
    total.q_sum += part.q_sum;
    total.q_abs_sum += part.q_abs_sum;
    total.q_square_sum += part.q_square_sum;
    if (total.argmin < 0 || part.q_min < total.q_min)
      total.q_min = part.q_min, total.argmin = part.argmin;
    if (total.argmax < 0 || part.q_max > total.q_max)
      total.q_max = part.q_max, total.argmax = part.argmax;
  }
  return total;
}

cudaError_t CubTypedBytes(DType dtype, size_t n, size_t* bytes) {
  return WithType(dtype, [&](auto type) {
    using T = decltype(type);
    size_t most = 0;
    for (bool min : {false, true}) {
      size_t temp = 0;
      if (cudaError_t e = CubCall<T>(min, nullptr, n, nullptr, nullptr, temp, 0);
          e != cudaSuccess) {
        return e;
      }
      most = std::max(most, temp);
    }
    *bytes = kCubTypedResultBytes + most;
    return cudaSuccess;
  });
}

cudaError_t CubTyped(DType dtype, bool min, const void* d_in, size_t n, void* d_scratch,
                     size_t scratch_bytes, cudaStream_t stream) {
  return WithType(dtype, [&](auto type) {
    using T = decltype(type);
    char* scratch = static_cast<char*>(d_scratch);
    size_t temp = scratch_bytes - kCubTypedResultBytes;
    return CubCall<T>(min, static_cast<const T*>(d_in), n, reinterpret_cast<T*>(scratch),
                      scratch + kCubTypedResultBytes, temp, stream);
  });
}

double CubTypedValue(DType dtype, const void* h_result) {
  double out = 0;
  WithType(dtype, [&](auto type) {
    using T = decltype(type);
    T value;
    std::memcpy(&value, h_result, sizeof(T));
    if constexpr (std::is_same_v<T, __half>) {
      out = __half2float(value);
    } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      out = __bfloat162float(value);
    } else {
      out = static_cast<double>(value);
    }
    return cudaSuccess;
  });
  return out;
}

}  // namespace gpureduce::bench
