// The segmented and strided float32 SUM kernels (segmented_sum.h).

#include "kernels/cuda/segmented/segmented_sum.h"

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/segmented/segmented_policy.h"

namespace gpureduce::kernels::cuda {
namespace {

constexpr SegmentedPolicy kPolicy = kSegmentedPolicy;
constexpr unsigned kThreads = 256;
static_assert(kPolicy.block_threads == kThreads);
constexpr unsigned kInFlight = 4;
static_assert(kPolicy.vectors_in_flight == kInFlight);

__host__ __device__ inline uint64_t Min(uint64_t a, uint64_t b) { return a < b ? a : b; }
__host__ __device__ inline uint64_t Max(uint64_t a, uint64_t b) { return a > b ? a : b; }

// Where segment s starts, and which segment holds element p (the last one starting at or before
// it: empty segments there are skipped).
struct SegmentMap {
  const uint64_t* d_offsets;
  uint64_t length;
  uint64_t count;

  __device__ uint64_t Begin(uint64_t s) const { return d_offsets ? d_offsets[s] : s * length; }
  __device__ uint64_t End(uint64_t s) const { return Begin(s + 1); }
  __device__ uint64_t Of(uint64_t p) const {
    if (!d_offsets) return p / length;
    uint64_t lo = 0, hi = count;  // the answer is in [lo, hi)
    while (hi - lo > 1) {
      const uint64_t mid = lo + (hi - lo) / 2;
      if (d_offsets[mid] <= p) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return lo;
  }
};

// The sum of d_in[begin, end) by the `lanes` lanes holding `lane` 0.. of a group, each lane's
// share in the group's lane 0 after the reduction (shuffles within `lanes`).
template <unsigned kLanes>
__device__ __forceinline__ double GroupSum(double sum) {
#pragma unroll
  for (unsigned offset = kLanes / 2; offset > 0; offset /= 2) {
    sum += __shfl_xor_sync(0xffffffffu, sum, offset, kLanes);
  }
  return sum;
}

// Lane `lane` of `kLanes` adds its share of d_in[begin, end) with scalar loads, kInFlight at a
// time.
template <unsigned kLanes>
__device__ __forceinline__ double ScalarShare(const float* __restrict__ d_in, uint64_t begin,
                                              uint64_t end, unsigned lane) {
  double sum = 0;
  for (uint64_t i = begin + lane; i < end; i += kInFlight * kLanes) {
    float v[kInFlight];
#pragma unroll
    for (unsigned k = 0; k < kInFlight; ++k) {
      v[k] = i + k * kLanes < end ? __ldcs(d_in + i + k * kLanes) : 0.0f;
    }
#pragma unroll
    for (unsigned k = 0; k < kInFlight; ++k) sum += v[k];
  }
  return sum;
}

// Lane `lane` of `kLanes` adds its share of d_in[begin, end): the elements before the first
// 16-byte boundary and after the last one singly, float4 vectors in between, kInFlight at a time.
template <unsigned kLanes>
__device__ __forceinline__ double VectorShare(const float* __restrict__ d_in, uint64_t begin,
                                              uint64_t end, unsigned lane) {
  const uint64_t misaligned = (reinterpret_cast<uintptr_t>(d_in + begin) / 4) % 4;
  const uint64_t head = Min(end - begin, (4 - misaligned) % 4);
  double sum = lane < head ? d_in[begin + lane] : 0.0;
  const uint64_t first = begin + head;
  const uint64_t vectors = (end - first) / 4;
  const float4* __restrict__ d_vectors = reinterpret_cast<const float4*>(d_in + first);
  for (uint64_t j = lane; j < vectors; j += kInFlight * kLanes) {
    float4 v[kInFlight];
#pragma unroll
    for (unsigned k = 0; k < kInFlight; ++k) {
      v[k] = j + k * kLanes < vectors ? __ldcs(d_vectors + j + k * kLanes) : float4{0, 0, 0, 0};
    }
#pragma unroll
    for (unsigned k = 0; k < kInFlight; ++k) {
      sum += static_cast<double>(v[k].x) + static_cast<double>(v[k].y) +
             (static_cast<double>(v[k].z) + static_cast<double>(v[k].w));
    }
  }
  const uint64_t tail = first + 4 * vectors;
  if (tail + lane < end) sum += d_in[tail + lane];
  return sum;
}

// A group of kLanes lanes per segment, with float4 loads (kVector) or scalar ones.
template <unsigned kLanes, bool kVector>
__global__ void __launch_bounds__(kThreads)
    GroupSumKernel(const float* __restrict__ d_in, SegmentMap segments, float* __restrict__ d_out) {
  const uint64_t thread = uint64_t{blockIdx.x} * kThreads + threadIdx.x;
  const uint64_t s = thread / kLanes;
  const unsigned lane = threadIdx.x % kLanes;
  double sum = 0;  // every lane takes part in the shuffles, also past the last segment
  if (s < segments.count) {
    const uint64_t begin = segments.Begin(s);
    const uint64_t end = segments.End(s);
    sum = kVector ? VectorShare<kLanes>(d_in, begin, end, lane)
                  : ScalarShare<kLanes>(d_in, begin, end, lane);
  }
  sum = GroupSum<kLanes>(sum);
  if (s < segments.count && lane == 0) d_out[s] = static_cast<float>(sum);
}

// The block's sum of `value`, in thread 0 (a fixed tree: deterministic).
__device__ double BlockSum(double value) {
  __shared__ double warps[kThreads / 32];
  value = GroupSum<32>(value);
  __syncthreads();  // `warps` may still be read from the previous call
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = value;
  __syncthreads();
  double total = 0;
  if (threadIdx.x == 0) {
#pragma unroll
    for (unsigned w = 0; w < kThreads / 32; ++w) total += warps[w];
  }
  return total;
}

// A block per segment: segments too long for a warp to read alone, too short to cut.
__global__ void __launch_bounds__(kThreads)
    BlockSegmentKernel(const float* __restrict__ d_in, SegmentMap segments,
                       float* __restrict__ d_out) {
  const uint64_t s = blockIdx.x;
  const double sum =
      BlockSum(VectorShare<kThreads>(d_in, segments.Begin(s), segments.End(s), threadIdx.x));
  if (threadIdx.x == 0) d_out[s] = static_cast<float>(sum);
}

// Block b reduces elements [b * range, (b + 1) * range) segment piece by piece: a segment whole
// inside the range is answered; the range's first and last pieces of segments that go on past it
// leave their sums in d_head[b] and d_tail[b] for RangeJoinKernel.
__global__ void __launch_bounds__(kThreads)
    RangeSumKernel(const float* __restrict__ d_in, uint64_t n, SegmentMap segments, uint64_t range,
                   float* __restrict__ d_out, double* __restrict__ d_head,
                   double* __restrict__ d_tail) {
  const uint64_t lo = uint64_t{blockIdx.x} * range;
  const uint64_t hi = Min(n, lo + range);
  const uint64_t first = segments.Of(lo);
  const uint64_t last = segments.Of(hi - 1);
  for (uint64_t s = first; s <= last; ++s) {
    const uint64_t begin = segments.Begin(s);
    const uint64_t end = segments.End(s);
    const uint64_t from = Max(begin, lo);
    const uint64_t to = Min(end, hi);
    double sum = from < to ? VectorShare<kThreads>(d_in, from, to, threadIdx.x) : 0.0;
    sum = BlockSum(sum);
    if (threadIdx.x != 0) continue;
    if (begin >= lo && end <= hi) {
      d_out[s] = static_cast<float>(sum);
    } else {
      if (s == first) d_head[blockIdx.x] = sum;
      if (s == last) d_tail[blockIdx.x] = sum;
    }
  }
}

// Block s answers segment s where it spans several ranges: its piece in each range, in order
// (the first range's tail, the whole of each range between, the last range's head).
__global__ void __launch_bounds__(kThreads)
    RangeJoinKernel(SegmentMap segments, uint64_t range, float* __restrict__ d_out,
                    const double* __restrict__ d_head, const double* __restrict__ d_tail) {
  const uint64_t s = blockIdx.x;
  const uint64_t begin = segments.Begin(s);
  const uint64_t end = segments.End(s);
  if (begin == end) {
    if (threadIdx.x == 0) d_out[s] = 0.0f;
    return;
  }
  const uint64_t b0 = begin / range;
  const uint64_t b1 = (end - 1) / range;
  if (b0 == b1) return;  // answered by its range's block
  double sum = 0;
  for (uint64_t b = b0 + threadIdx.x; b <= b1; b += kThreads) {
    sum += b == b0 ? d_tail[b] : d_head[b];
  }
  sum = BlockSum(sum);
  if (threadIdx.x == 0) d_out[s] = static_cast<float>(sum);
}

// Thread t adds column vector c4 = t % vectors_per_row (4 columns, or one in the scalar form)
// over rows [chunk * rows_per_chunk, ...), chunk = t / vectors_per_row, into d_partial[chunk]
// (or, with one chunk, rounds it into d_out).
template <bool kVector>
__global__ void __launch_bounds__(kThreads)
    StridedSumKernel(const float* __restrict__ d_in, uint64_t rows, uint64_t cols,
                     uint64_t rows_per_chunk, uint64_t chunks, double* __restrict__ d_partial,
                     float* __restrict__ d_out) {
  constexpr uint64_t kWidth = kVector ? 4 : 1;
  const uint64_t per_row = cols / kWidth;
  const uint64_t thread = uint64_t{blockIdx.x} * kThreads + threadIdx.x;
  if (thread >= per_row * chunks) return;
  const uint64_t column = thread % per_row * kWidth;
  const uint64_t chunk = thread / per_row;
  const uint64_t r0 = chunk * rows_per_chunk;
  const uint64_t r1 = Min(rows, r0 + rows_per_chunk);
  double sum[kWidth] = {};
  for (uint64_t r = r0; r < r1; r += kInFlight) {
    float v[kInFlight][kWidth];
#pragma unroll
    for (unsigned k = 0; k < kInFlight; ++k) {
      const float* at = d_in + (r + k) * cols + column;
      if (r + k < r1) {
        if constexpr (kVector) {
          const float4 x = __ldcs(reinterpret_cast<const float4*>(at));
          v[k][0] = x.x;
          v[k][1] = x.y;
          v[k][2] = x.z;
          v[k][3] = x.w;
        } else {
          v[k][0] = __ldcs(at);
        }
      } else {
#pragma unroll
        for (unsigned w = 0; w < kWidth; ++w) v[k][w] = 0.0f;
      }
    }
#pragma unroll
    for (unsigned k = 0; k < kInFlight; ++k) {
#pragma unroll
      for (unsigned w = 0; w < kWidth; ++w) sum[w] += v[k][w];
    }
  }
#pragma unroll
  for (unsigned w = 0; w < kWidth; ++w) {
    if (chunks == 1) {
      d_out[column + w] = static_cast<float>(sum[w]);
    } else {
      d_partial[chunk * cols + column + w] = sum[w];
    }
  }
}

// The partials of chunks [g * kFold, (g + 1) * kFold) of column c, in chunk order, into the
// group's first: thread (g, c), reading a row of partials across the threads of a warp.
constexpr uint64_t kFold = 64;
__global__ void __launch_bounds__(kThreads)
    StridedFoldKernel(double* __restrict__ d_partial, uint64_t cols, uint64_t chunks) {
  const uint64_t thread = uint64_t{blockIdx.x} * kThreads + threadIdx.x;
  const uint64_t c = thread % cols;
  const uint64_t first = thread / cols * kFold;
  if (first >= chunks) return;
  const uint64_t last = Min(chunks, first + kFold);
  double sum = 0;
  for (uint64_t k = first; k < last; ++k) sum += d_partial[k * cols + c];
  d_partial[first * cols + c] = sum;
}

// d_out[c]: the folded groups of column c, in order.
__global__ void __launch_bounds__(kThreads)
    StridedJoinKernel(const double* __restrict__ d_partial, uint64_t cols, uint64_t chunks,
                      float* __restrict__ d_out) {
  const uint64_t c = uint64_t{blockIdx.x} * kThreads + threadIdx.x;
  if (c >= cols) return;
  double sum = 0;
  for (uint64_t k = 0; k < chunks; k += kFold) sum += d_partial[k * cols + c];
  d_out[c] = static_cast<float>(sum);
}

uint64_t Ranges(uint64_t n) { return (n + kPolicy.range_elements - 1) / kPolicy.range_elements; }

struct StridedShape {
  bool vector;
  uint64_t per_row;  // threads a chunk of rows takes
  uint64_t rows_per_chunk;
  uint64_t chunks;
};

StridedShape ShapeOf(const GpuTraits& gpu, bool vector, uint64_t rows, uint64_t cols) {
  StridedShape shape;
  shape.vector = vector;
  shape.per_row = vector ? cols / 4 : cols;
  // Enough threads to fill every multiprocessor once, each reading at least strided_min_rows
  // rows.
  const uint64_t wanted =
      uint64_t(gpu.multiprocessors) * uint64_t(gpu.max_threads_per_multiprocessor);
  uint64_t chunks = Max(1, wanted / Max(1, shape.per_row));
  chunks = Min(chunks, Max(1, rows / kPolicy.strided_min_rows));
  shape.rows_per_chunk = Max(1, (rows + chunks - 1) / chunks);
  shape.chunks = rows == 0 ? 1 : (rows + shape.rows_per_chunk - 1) / shape.rows_per_chunk;
  return shape;
}

bool Vectorizable(const float* d_in, uint64_t cols) {
  return cols % 4 == 0 && reinterpret_cast<uintptr_t>(d_in) % 16 == 0;
}

uint64_t Blocks(uint64_t threads) { return (threads + kThreads - 1) / kThreads; }

}  // namespace

size_t SegmentedSumScratchBytes(const GpuTraits& gpu, uint64_t n) {
  (void)gpu;
  return 2 * Ranges(n) * sizeof(double);
}

size_t StridedSumScratchBytes(const GpuTraits& gpu, uint64_t rows, uint64_t cols) {
  // Either form, whichever the input's alignment picks.
  const uint64_t chunks =
      Max(ShapeOf(gpu, false, rows, cols).chunks, ShapeOf(gpu, true, rows, cols).chunks);
  return chunks * cols * sizeof(double);
}

cudaError_t SegmentedSum(const GpuTraits& gpu, const float* d_in, uint64_t n,
                         const Segments& segments, float* d_out, void* d_scratch,
                         size_t scratch_bytes, cudaStream_t stream) {
  (void)gpu;
  if (segments.count == 0) return cudaSuccess;
  const SegmentMap map{segments.d_offsets, segments.length, segments.count};
  const uint64_t mean = n / segments.count;
  if (n == 0 || mean < kPolicy.ranges_from) {
    const uint64_t count = segments.count;
    if (mean >= kPolicy.block_from) {
      BlockSegmentKernel<<<count, kThreads, 0, stream>>>(d_in, map, d_out);
    } else if (mean >= 512) {  // a warp: 4 float4 loads a lane or more
      GroupSumKernel<32, true><<<Blocks(count * 32), kThreads, 0, stream>>>(d_in, map, d_out);
    } else if (mean >= 256) {
      GroupSumKernel<16, true><<<Blocks(count * 16), kThreads, 0, stream>>>(d_in, map, d_out);
    } else if (mean >= 128) {
      GroupSumKernel<8, true><<<Blocks(count * 8), kThreads, 0, stream>>>(d_in, map, d_out);
    } else if (mean >= kPolicy.vector_from) {
      GroupSumKernel<4, true><<<Blocks(count * 4), kThreads, 0, stream>>>(d_in, map, d_out);
    } else if (mean >= 32) {  // scalar loads, about four a lane
      GroupSumKernel<8, false><<<Blocks(count * 8), kThreads, 0, stream>>>(d_in, map, d_out);
    } else if (mean >= 16) {
      GroupSumKernel<4, false><<<Blocks(count * 4), kThreads, 0, stream>>>(d_in, map, d_out);
    } else if (mean >= 8) {
      GroupSumKernel<2, false><<<Blocks(count * 2), kThreads, 0, stream>>>(d_in, map, d_out);
    } else {
      GroupSumKernel<1, false><<<Blocks(count), kThreads, 0, stream>>>(d_in, map, d_out);
    }
    return cudaGetLastError();
  }
  const uint64_t ranges = Ranges(n);
  if (scratch_bytes < 2 * ranges * sizeof(double)) return cudaErrorInvalidValue;
  auto* d_head = static_cast<double*>(d_scratch);
  double* d_tail = d_head + ranges;
  RangeSumKernel<<<ranges, kThreads, 0, stream>>>(d_in, n, map, kPolicy.range_elements, d_out,
                                                  d_head, d_tail);
  RangeJoinKernel<<<segments.count, kThreads, 0, stream>>>(map, kPolicy.range_elements, d_out,
                                                           d_head, d_tail);
  return cudaGetLastError();
}

cudaError_t StridedSum(const GpuTraits& gpu, const float* d_in, uint64_t rows, uint64_t cols,
                       float* d_out, void* d_scratch, size_t scratch_bytes, cudaStream_t stream) {
  if (cols == 0) return cudaSuccess;
  const StridedShape shape = ShapeOf(gpu, Vectorizable(d_in, cols), rows, cols);
  if (shape.chunks > 1 && scratch_bytes < shape.chunks * cols * sizeof(double)) {
    return cudaErrorInvalidValue;
  }
  auto* d_partial = static_cast<double*>(d_scratch);
  const uint64_t threads = shape.per_row * shape.chunks;
  if (shape.vector) {
    StridedSumKernel<true><<<Blocks(threads), kThreads, 0, stream>>>(
        d_in, rows, cols, shape.rows_per_chunk, shape.chunks, d_partial, d_out);
  } else {
    StridedSumKernel<false><<<Blocks(threads), kThreads, 0, stream>>>(
        d_in, rows, cols, shape.rows_per_chunk, shape.chunks, d_partial, d_out);
  }
  if (shape.chunks > 1) {
    const uint64_t groups = (shape.chunks + kFold - 1) / kFold;
    if (groups < shape.chunks) {
      StridedFoldKernel<<<Blocks(groups * cols), kThreads, 0, stream>>>(d_partial, cols,
                                                                        shape.chunks);
    }
    StridedJoinKernel<<<Blocks(cols), kThreads, 0, stream>>>(d_partial, cols, shape.chunks, d_out);
  }
  return cudaGetLastError();
}

}  // namespace gpureduce::kernels::cuda
