#include "kernels/cuda/cub_reduce.h"

#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cub/device/device_reduce.cuh>
#include <type_traits>

#include "common/extreme_order.h"
#include "kernels/op_dispatch.h"

namespace gpureduce::kernels::cuda {
namespace {

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
  __device__ CubArgPair operator()(const CubArgPair& a, const CubArgPair& b) const {
    return PrecedesExtreme(kLess, b.value, b.index, a.value, a.index) ? b : a;
  }
};

struct ToArgPair {
  const float* d_in;
  __device__ CubArgPair operator()(int64_t i) const { return CubArgPair{d_in[i], i}; }
};

__global__ void FoldChunk(Op op, const CubChunkResult* d_result, uint64_t n, uint64_t base_index,
                          Partial* d_running, bool store) {
  // The member of the result that the op's reduction wrote (Dispatch below).
  const Partial chunk = DispatchOp(op, Partial{}, [&](auto reduction) {
    using ReductionT = decltype(reduction);
    Partial out;
    out.count = n;
    if constexpr (ReductionT::kKind == ReductionKind::kExtreme) {
      out.value = d_result->extreme;
    } else if constexpr (ReductionT::kKind == ReductionKind::kArgExtreme) {
      out.value = d_result->arg.value;
      out.index = static_cast<int64_t>(base_index) + d_result->arg.index;
    } else {
      out.value = d_result->sum;
    }
    return out;
  });
  *d_running = store ? chunk : Combine(op, *d_running, chunk);
}

// One CUB call per reduction; `d_temp` null asks for the temp size.
cudaError_t Dispatch(Op op, const float* d_in, size_t n, CubChunkResult* d_result, void* d_temp,
                     size_t& temp_bytes, cudaStream_t stream) {
  return DispatchOp(op, cudaErrorInvalidValue, [&](auto reduction) {
    using ReductionT = decltype(reduction);
    constexpr bool kLess = ReductionT::kLess;
    // What every element goes before: +inf for MIN and ARGMIN, -inf for MAX and ARGMAX.
    const float identity = kLess ? __builtin_huge_valf() : -__builtin_huge_valf();
    if constexpr (ReductionT::kKind == ReductionKind::kSum) {
      using TransformT = std::conditional_t<ReductionT::kSquares, ToSquare, ToDouble>;
      return cub::DeviceReduce::TransformReduce(d_temp, temp_bytes, d_in, &d_result->sum, n, Plus{},
                                                TransformT{}, 0.0, stream);
    } else if constexpr (ReductionT::kKind == ReductionKind::kProduct) {
      return cub::DeviceReduce::TransformReduce(d_temp, temp_bytes, d_in, &d_result->sum, n,
                                                Times{}, ToDouble{}, 1.0, stream);
    } else if constexpr (ReductionT::kKind == ReductionKind::kExtreme) {
      return cub::DeviceReduce::Reduce(d_temp, temp_bytes, d_in, &d_result->extreme, n,
                                       NanExtreme<kLess>{}, identity, stream);
    } else {
      const thrust::counting_iterator<int64_t> indices(0);
      return cub::DeviceReduce::TransformReduce(d_temp, temp_bytes, indices, &d_result->arg, n,
                                                FirstExtreme<kLess>{}, ToArgPair{d_in},
                                                CubArgPair{identity, INT64_MAX}, stream);
    }
  });
}

}  // namespace

cudaError_t CubTempBytes(size_t max_elements, size_t* bytes) {
  CubChunkResult unused;  // CUB only measures: no result is written
  size_t most = 0;
  for (Op op : kClassicOps) {
    size_t op_bytes = 0;
    if (cudaError_t error = Dispatch(op, nullptr, max_elements, &unused, nullptr, op_bytes, 0);
        error != cudaSuccess) {
      return error;
    }
    most = std::max(most, op_bytes);
  }
  *bytes = most;
  return cudaSuccess;
}

cudaError_t CubReduceInto(Op op, const float* d_in, size_t n, uint64_t base_index,
                          Partial* d_running, const CubScratch& scratch, cudaStream_t stream,
                          bool store) {
  size_t temp_bytes = scratch.temp.size;
  if (cudaError_t error =
          Dispatch(op, d_in, n, scratch.result.d_data, scratch.temp.d_data, temp_bytes, stream);
      error != cudaSuccess) {
    return error;
  }
  FoldChunk<<<1, 1, 0, stream>>>(op, scratch.result.d_data, n, base_index, d_running, store);
  return cudaGetLastError();
}

}  // namespace gpureduce::kernels::cuda
