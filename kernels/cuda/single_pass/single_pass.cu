#include <algorithm>

#include "kernels/cuda/single_pass/accumulators.cuh"
#include "kernels/cuda/single_pass/single_pass.h"
#include "kernels/cuda/single_pass/single_pass_kernel.cuh"

namespace gpureduce::kernels::cuda {
namespace {

constexpr unsigned kBlock = SinglePassPolicy::kBlockThreads;
constexpr unsigned kVectors = SinglePassPolicy::kVectorsPerThread;
constexpr size_t kCounterBytes = 256;  // keeps the block states aligned

template <typename AccumulatorT>
constexpr auto kKernel = SinglePassKernel<AccumulatorT, kBlock, kVectors>;

// Blocks of this instantiation that fit on one SM; asked once per
// instantiation.
template <typename AccumulatorT>
unsigned ResidentBlocksPerSm() {
  static const unsigned resident = [] {
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kKernel<AccumulatorT>, kBlock, 0) !=
            cudaSuccess ||
        blocks < 1) {
      return 1u;
    }
    return static_cast<unsigned>(blocks);
  }();
  return resident;
}

unsigned GridFor(const SinglePassLaunch& launch, size_t n, unsigned resident_per_sm) {
  const SinglePassPolicy& policy = launch.policy;
  const uint64_t sms = std::max(1, launch.multiprocessors);
  const uint64_t per_sm =
      policy.blocks_per_sm == 0 ? resident_per_sm : std::min(policy.blocks_per_sm, resident_per_sm);
  const uint64_t vectors = std::max<uint64_t>(1, n / 4);
  // Enough blocks for one full iteration per thread, but spread over the SMs
  // when that is few.
  uint64_t grid = (vectors + kBlock * kVectors - 1) / (kBlock * kVectors);
  const uint64_t spread =
      std::min<uint64_t>(sms * policy.min_blocks_per_sm, (vectors + kBlock - 1) / kBlock);
  grid = std::max(grid, spread);
  grid = std::min({grid, sms * per_sm, uint64_t{SinglePassPolicy::kMaxBlocks}});
  return static_cast<unsigned>(std::max<uint64_t>(grid, 1));
}

template <typename AccumulatorT>
cudaError_t Launch(const SinglePassLaunch& launch, Op op, const float* d_in, size_t n,
                   uint64_t base_index, Partial* d_out, bool accumulate) {
  const unsigned grid = GridFor(launch, n, ResidentBlocksPerSm<AccumulatorT>());
  char* scratch = static_cast<char*>(launch.d_scratch);
  const SinglePassOutput output{d_out, accumulate, reinterpret_cast<unsigned*>(scratch),
                                scratch + kCounterBytes};
  kKernel<AccumulatorT><<<grid, kBlock, 0, launch.stream>>>(d_in, n, base_index, op, output);
  return cudaGetLastError();
}

}  // namespace

static_assert(kCounterBytes + SinglePassPolicy::kMaxBlocks * 16 <= kSinglePassScratchBytes);
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

unsigned SinglePassGrid(const SinglePassLaunch& launch, size_t n) {
  return GridFor(launch, n, ResidentBlocksPerSm<SumAccumulator<double, SumInput::kValue>>());
}

}  // namespace gpureduce::kernels::cuda
