#include "kernels/cuda/single_pass/single_pass.h"

#include <algorithm>

#include "kernels/cuda/single_pass/accumulators.cuh"
#include "kernels/cuda/single_pass/single_pass_kernel.cuh"

namespace gpureduce::kernels::cuda {
namespace {

// One tile shape serves every policy, so each accumulator's kernel is instantiated once; a
// policy with another shape needs its own instantiation in Launch below.
constexpr SinglePassPolicy kShape = kSinglePassPolicySm90;
static_assert(kSinglePassPolicyDefault.block_threads == kShape.block_threads &&
              kSinglePassPolicyDefault.vectors_per_thread == kShape.vectors_per_thread);
constexpr unsigned kBlock = kShape.block_threads;
constexpr unsigned kVectors = kShape.vectors_per_thread;
constexpr size_t kCounterBytes = 256;  // keeps the block states aligned

template <typename AccumulatorT, unsigned kBlockT = kBlock, unsigned kVectorsT = kVectors>
constexpr auto kKernel = SinglePassKernel<AccumulatorT, kBlockT, kVectorsT>;

// Blocks of this instantiation that fit on one SM; asked once per instantiation.
template <typename AccumulatorT, unsigned kBlockT, unsigned kVectorsT>
unsigned ResidentBlocksPerSm() {
  static const unsigned resident = [] {
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &blocks, kKernel<AccumulatorT, kBlockT, kVectorsT>, kBlockT, 0) != cudaSuccess ||
        blocks < 1) {
      return 1u;
    }
    return static_cast<unsigned>(blocks);
  }();
  return resident;
}

// At most as many blocks as fit on the device at once while each gets a few tiles, up to the
// policy's max_blocks for larger inputs (single_pass_policy.h says what each choice measured).
// Every block gets the same number of tiles, so no last round runs half empty.
unsigned GridFor(const SinglePassLaunch& launch, const SinglePassPolicy& policy, size_t n,
                 uint64_t tile_vectors, unsigned resident_per_sm) {
  const uint64_t resident = uint64_t(std::max(1, launch.gpu.multiprocessors)) * resident_per_sm;
  const uint64_t tiles = std::max<uint64_t>(1, (n / 4 + tile_vectors - 1) / tile_vectors);
  uint64_t cap = tiles <= uint64_t{policy.tiles_per_resident_block} * resident
                     ? resident
                     : uint64_t{policy.max_blocks};
  if (launch.max_blocks != 0) cap = launch.max_blocks;
  cap = std::min<uint64_t>(cap, kSinglePassMaxBlocks);
  const uint64_t rounds = (tiles + cap - 1) / cap;
  return static_cast<unsigned>((tiles + rounds - 1) / rounds);
}

template <typename AccumulatorT, unsigned kBlockT = kBlock, unsigned kVectorsT = kVectors>
cudaError_t Launch(const SinglePassLaunch& launch, Op op, const float* d_in, size_t n,
                   uint64_t base_index, Partial* d_out, bool accumulate) {
  const SinglePassPolicy& policy = SinglePassPolicyFor(launch.gpu.compute_capability);
  const unsigned grid = GridFor(launch, policy, n, uint64_t{kBlockT} * kVectorsT,
                                ResidentBlocksPerSm<AccumulatorT, kBlockT, kVectorsT>());
  char* scratch = static_cast<char*>(launch.d_scratch);
  const SinglePassOutput output{d_out, accumulate, reinterpret_cast<unsigned*>(scratch),
                                scratch + kCounterBytes};
  kKernel<AccumulatorT, kBlockT, kVectorsT>
      <<<grid, kBlockT, 0, launch.stream>>>(d_in, n, base_index, op, output);
  return cudaGetLastError();
}

}  // namespace

static_assert(kCounterBytes + kSinglePassMaxBlocks * 16 <= kSinglePassScratchBytes);
static_assert(sizeof(ArgExtremeAccumulator<true>) <= 16 &&
              sizeof(SumAccumulator<double, SumInput::kValue>) <= 16 &&
              sizeof(ProdAccumulator) <= 16);

cudaError_t SinglePassReduce(const SinglePassLaunch& launch, Op op, const float* d_in, size_t n,
                             uint64_t base_index, Partial* d_out, bool accumulate) {
  switch (op) {
    case Op::kSum:
    case Op::kMean:
      return Launch<SumAccumulator<double, SumInput::kValue>>(launch, op, d_in, n, base_index,
                                                              d_out, accumulate);
    case Op::kSumSquares:
      return Launch<SumAccumulator<double, SumInput::kSquare>>(launch, op, d_in, n, base_index,
                                                               d_out, accumulate);
    case Op::kProd:
      return Launch<ProdAccumulator>(launch, op, d_in, n, base_index, d_out, accumulate);
    case Op::kMin:
      return Launch<ExtremeAccumulator<true>>(launch, op, d_in, n, base_index, d_out, accumulate);
    case Op::kMax:
      return Launch<ExtremeAccumulator<false>>(launch, op, d_in, n, base_index, d_out, accumulate);
    case Op::kArgMin:
      return Launch<ArgExtremeAccumulator<true>>(launch, op, d_in, n, base_index, d_out,
                                                 accumulate);
    case Op::kArgMax:
      return Launch<ArgExtremeAccumulator<false>>(launch, op, d_in, n, base_index, d_out,
                                                  accumulate);
  }
  return cudaErrorInvalidValue;
}

cudaError_t SinglePassSumFloat32(const SinglePassLaunch& launch, const float* d_in, size_t n,
                                 Partial* d_out) {
  return Launch<SumAccumulator<float, SumInput::kValue>>(launch, Op::kSum, d_in, n, 0, d_out,
                                                         false);
}

cudaError_t SinglePassSumShape(const SinglePassLaunch& launch, SinglePassShape shape,
                               const float* d_in, size_t n, Partial* d_out) {
  using Sum = SumAccumulator<double, SumInput::kValue>;
  switch (shape) {
    case SinglePassShape::k256x8:
      return Launch<Sum, 256, 8>(launch, Op::kSum, d_in, n, 0, d_out, false);
    case SinglePassShape::k512x4:
      return Launch<Sum, 512, 4>(launch, Op::kSum, d_in, n, 0, d_out, false);
  }
  return cudaErrorInvalidValue;
}

}  // namespace gpureduce::kernels::cuda
