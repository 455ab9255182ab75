#include "kernels/cuda/cub_reduce.h"

#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cub/device/device_reduce.cuh>

#include "common/extreme_order.h"

namespace gpureduce::kernels::cuda {
namespace {

// The chunk's result sits at the start of the scratch; CUB's temp storage follows it.
constexpr size_t kResultBytes = 256;

struct ArgPair {
  float value;
  int64_t index;
};

struct ToDouble {
  __device__ double operator()(float x) const { return x; }
};
struct ToSquare {
  __device__ double operator()(float x) const { return double{x} * double{x}; }
};
struct Plus {
  __device__ double operator()(double a, double b) const { return a + b; }
};
struct Times {
  __device__ double operator()(double a, double b) const { return a * b; }
};

// NumPy's min/max (extreme_order.h): associative and commutative, as CUB requires.
template <bool kLess>
struct NanExtreme {
  __device__ float operator()(float a, float b) const { return PickExtreme(kLess, a, b); }
};

// The extreme_order.h total order (first NaN, else the extreme, ties to the lower index), so CUB
// may combine in any order.
template <bool kLess>
struct FirstExtreme {
  __device__ ArgPair operator()(const ArgPair& a, const ArgPair& b) const {
    return PrecedesExtreme(kLess, b.value, b.index, a.value, a.index) ? b : a;
  }
};

struct ToArgPair {
  const float* d_in;
  __device__ ArgPair operator()(int64_t i) const { return ArgPair{d_in[i], i}; }
};

__global__ void FoldChunk(Op op, const void* d_result, uint64_t n, uint64_t base_index,
                          Partial* d_running, bool store) {
  Partial chunk;
  chunk.count = n;
  switch (op) {
    case Op::kMin:
    case Op::kMax:
      chunk.value = *static_cast<const float*>(d_result);
      break;
    case Op::kArgMin:
    case Op::kArgMax: {
      const ArgPair pair = *static_cast<const ArgPair*>(d_result);
      chunk.value = pair.value;
      chunk.index = static_cast<int64_t>(base_index) + pair.index;
      break;
    }
    default:
      chunk.value = *static_cast<const double*>(d_result);
  }
  *d_running = store ? chunk : Combine(op, *d_running, chunk);
}

// One CUB call per op; `d_temp` null asks for the temp size.
cudaError_t Dispatch(Op op, const float* d_in, size_t n, void* d_result, void* d_temp,
                     size_t& temp_bytes, cudaStream_t stream) {
  const thrust::counting_iterator<int64_t> indices(0);
  const ArgPair lowest{__builtin_huge_valf(), INT64_MAX};
  const ArgPair highest{-__builtin_huge_valf(), INT64_MAX};
  switch (op) {
    case Op::kSum:
    case Op::kMean:
      return cub::DeviceReduce::TransformReduce(d_temp, temp_bytes, d_in,
                                                static_cast<double*>(d_result), n, Plus{},
                                                ToDouble{}, 0.0, stream);
    case Op::kSumSquares:
      return cub::DeviceReduce::TransformReduce(d_temp, temp_bytes, d_in,
                                                static_cast<double*>(d_result), n, Plus{},
                                                ToSquare{}, 0.0, stream);
    case Op::kProd:
      return cub::DeviceReduce::TransformReduce(d_temp, temp_bytes, d_in,
                                                static_cast<double*>(d_result), n, Times{},
                                                ToDouble{}, 1.0, stream);
    case Op::kMin:
      return cub::DeviceReduce::Reduce(d_temp, temp_bytes, d_in, static_cast<float*>(d_result), n,
                                       NanExtreme<true>{}, __builtin_huge_valf(), stream);
    case Op::kMax:
      return cub::DeviceReduce::Reduce(d_temp, temp_bytes, d_in, static_cast<float*>(d_result), n,
                                       NanExtreme<false>{}, -__builtin_huge_valf(), stream);
    case Op::kArgMin:
      return cub::DeviceReduce::TransformReduce(
          d_temp, temp_bytes, indices, static_cast<ArgPair*>(d_result), n, FirstExtreme<true>{},
          ToArgPair{d_in}, lowest, stream);
    case Op::kArgMax:
      return cub::DeviceReduce::TransformReduce(
          d_temp, temp_bytes, indices, static_cast<ArgPair*>(d_result), n, FirstExtreme<false>{},
          ToArgPair{d_in}, highest, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t CubTempBytes(size_t max_elements, size_t* bytes) {
  size_t most = 0;
  for (Op op : kAllOps) {
    size_t op_bytes = 0;
    if (cudaError_t error = Dispatch(op, nullptr, max_elements, nullptr, nullptr, op_bytes, 0);
        error != cudaSuccess) {
      return error;
    }
    most = std::max(most, op_bytes);
  }
  *bytes = kResultBytes + most;
  return cudaSuccess;
}

cudaError_t CubReduceInto(Op op, const float* d_in, size_t n, uint64_t base_index,
                          Partial* d_running, void* d_temp, size_t temp_bytes, cudaStream_t stream,
                          bool store) {
  void* d_result = d_temp;
  void* d_cub_temp = static_cast<char*>(d_temp) + kResultBytes;
  size_t cub_bytes = temp_bytes - kResultBytes;
  if (cudaError_t error = Dispatch(op, d_in, n, d_result, d_cub_temp, cub_bytes, stream);
      error != cudaSuccess) {
    return error;
  }
  FoldChunk<<<1, 1, 0, stream>>>(op, d_result, n, base_index, d_running, store);
  return cudaGetLastError();
}

}  // namespace gpureduce::kernels::cuda
