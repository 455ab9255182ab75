#pragma once

// A stream's device scratch: one allocation that the GPU kernels take their temporaries from,
// described as typed arrays on aligned boundaries rather than a void* and byte offsets (CUB's
// temp-storage idiom; kernels/reduce.h has the CUDA entry point, LayOutScratch). Plain C++
// with no CUDA, so the layout is tested without a GPU.

#include <cstddef>
#include <cstdint>

namespace gpureduce::kernels {

// Every array starts on a boundary of this many bytes: cudaMalloc's alignment and what CUB asks
// of its temp storage, and it keeps each array off its neighbours' cache lines.
inline constexpr size_t kScratchAlignment = 256;

// `size` elements of T in device memory (d_data null in a layout that only measures).
template <typename T>
struct DeviceArray {
  T* d_data = nullptr;
  size_t size = 0;
};

// Places typed arrays one after another from `offset` bytes into a scratch at d_base, each on a
// kScratchAlignment boundary. With d_base null it only measures: end() is then the bytes the
// arrays need. The one place a scratch's bytes become typed pointers.
class ScratchCarver {
 public:
  explicit ScratchCarver(std::byte* d_base = nullptr, size_t offset = 0)
      : d_base_(d_base), end_(offset) {}

  template <typename T>
  DeviceArray<T> Take(size_t size) {
    static_assert(kScratchAlignment % alignof(T) == 0);
    const size_t offset = AlignUp(end_);
    end_ = offset + size * sizeof(T);
    return {d_base_ == nullptr ? nullptr : reinterpret_cast<T*>(d_base_ + offset), size};
  }

  // One past the last byte taken.
  size_t end() const { return end_; }

  static constexpr size_t AlignUp(size_t bytes) {
    return (bytes + kScratchAlignment - 1) / kScratchAlignment * kScratchAlignment;
  }

 private:
  std::byte* d_base_;
  size_t end_;
};

// Room for one block's state of any single_pass accumulator (single_pass.cu asserts that each
// fits). A launch packs its accumulator's states at their own size in this storage.
struct alignas(16) SinglePassBlockState {
  unsigned char bytes[16];
};

// single_pass: a launch counter, which must start at zero (zero the scratch once after allocating
// it; the last block resets it), and the block states of one launch.
struct SinglePassScratch {
  DeviceArray<unsigned> counter;                   // one
  DeviceArray<SinglePassBlockState> block_states;  // kSinglePassMaxBlocks
};

// The stats kernel (ReduceStatsInto, any dtype): room for one block's merged state of any
// instantiation (stats_kernel.cuh asserts each fits), and the most blocks a launch uses (its grid
// is the blocks resident at once: 1056 on an H100).
struct alignas(16) StatsBlockState {
  unsigned char bytes[128];
};
inline constexpr uint32_t kStatsMaxBlocks = 2048;

// The stats kernel: a launch counter, which must start at zero (the last block resets it), and
// the block states of one launch.
struct StatsScratch {
  DeviceArray<unsigned> counter;              // one
  DeviceArray<StatsBlockState> block_states;  // kStatsMaxBlocks
};

// cub: a chunk's result before it is folded into the running Partial, which member by op.
struct CubArgPair {
  float value;
  int64_t index;  // within the chunk
};
union CubChunkResult {
  double sum;      // SUM, MEAN, SUM_SQUARES: the float64 sum; PROD: the float64 product
  float extreme;   // MIN, MAX
  CubArgPair arg;  // ARGMIN, ARGMAX
};
struct CubScratch {
  DeviceArray<CubChunkResult> result;  // one
  DeviceArray<std::byte> temp;         // CUB's temp storage
};

// The ladder: its float32 result, and the block partials the passes of a tree variant write,
// alternating between two buffers.
struct LadderScratch {
  DeviceArray<float> result;  // one
  DeviceArray<float> partials_a;
  DeviceArray<float> partials_b;
};

// Block partials a tree pass over `elements` writes at most: one per block of the smallest block
// size any ladder variant allows.
size_t LadderPartialsCapacity(size_t elements);

SinglePassScratch CarveSinglePassScratch(ScratchCarver& carver);
StatsScratch CarveStatsScratch(ScratchCarver& carver);
CubScratch CarveCubScratch(ScratchCarver& carver, size_t cub_temp_bytes);
LadderScratch CarveLadderScratch(ScratchCarver& carver, size_t max_elements);

// Every kernel's scratch for one stream.
struct ScratchLayout {
  // A kernel runs on the stream one chunk at a time and is done with its arrays when the next
  // starts, so cub and the ladder share the front of the scratch.
  CubScratch cub;
  LadderScratch ladder;
  // single_pass's arrays come after both, so no other kernel can write over its counter.
  SinglePassScratch single_pass;
  // The stats kernel's after single_pass's, for the same reason (its own counter).
  StatsScratch stats;
  size_t bytes = 0;  // the whole scratch
};

// The layout over a scratch at d_base (null: only measures, in `bytes`) for chunks of up to
// `max_elements`, given the bytes CUB's temp storage takes for them.
ScratchLayout CarveScratch(std::byte* d_base, size_t max_elements, size_t cub_temp_bytes);

}  // namespace gpureduce::kernels
