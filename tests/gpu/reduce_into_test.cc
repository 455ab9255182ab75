// kernels::cuda::LayOutScratch and ReduceInto (kernels/reduce.h), the entry points the runtime
// calls, directly: the size query and the layout agree and a scratch too small is refused; one
// lane's scratch serves every kernel family in turn, chunk after chunk, each answer matching the
// float64 reference (so no family's arrays disturb another's, single_pass's counter included).
// Bounds: Float64KernelBound (kernel_fixture.h); the ladder is checked on the ops it answers
// exactly (MIN, MAX). Without a GPU every test skips.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/reduce.h"
#include "kernels/scratch_layout.h"
#include "tests/gpu/kernel_fixture.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"

namespace gpureduce::kernels {
namespace {

using testing::CheckAgainstReference;
using testing::ComputeReference;

constexpr size_t kChunk = size_t{1} << 18;  // the lane's largest chunk

class ReduceIntoTest : public testing::KernelFixture {
 protected:
  void TearDown() override {
    cudaFree(d_scratch_);
    cudaFree(d_in_);
    KernelFixture::TearDown();
  }

  // A lane's scratch as the runtime makes it: measured, allocated, zeroed, laid out.
  void MakeScratch() {
    ASSERT_EQ(cuda::LayOutScratch(nullptr, &scratch_bytes_, kChunk, nullptr), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&d_scratch_, scratch_bytes_), cudaSuccess);
    ASSERT_EQ(cudaMemset(d_scratch_, 0, scratch_bytes_), cudaSuccess);
    ASSERT_EQ(
        cuda::LayOutScratch(static_cast<std::byte*>(d_scratch_), &scratch_bytes_, kChunk, &layout_),
        cudaSuccess);
  }

  // `op` over data with `kernel`, in chunks of at most kChunk folded into the running partial.
  cudaError_t Reduce(KernelId kernel, Op op, size_t n, Partial* partial) {
    for (size_t begin = 0; begin < n; begin += kChunk) {
      const cuda::ChunkLaunch launch{kernel, op, 0, gpu_, layout_, stream_, begin == 0};
      if (cudaError_t error = cuda::ReduceInto(launch, d_in_ + begin, std::min(kChunk, n - begin),
                                               begin, d_running_);
          error != cudaSuccess) {
        return error;
      }
    }
    return ReadRunning(partial);
  }

  void* d_scratch_ = nullptr;
  size_t scratch_bytes_ = 0;
  ScratchLayout layout_;
  float* d_in_ = nullptr;
};

TEST_F(ReduceIntoTest, TheSizeQueryAndTheLayoutAgreeAndTooSmallIsRefused) {
  MakeScratch();
  const std::byte* base = static_cast<std::byte*>(d_scratch_);
  EXPECT_EQ(layout_.bytes, scratch_bytes_);
  EXPECT_GE(layout_.ladder.partials_b.size, kChunk / 32);
  EXPECT_GT(layout_.cub.temp.size, 0u);
  const std::byte* last = reinterpret_cast<const std::byte*>(
      layout_.single_pass.block_states.d_data + layout_.single_pass.block_states.size);
  EXPECT_GE(reinterpret_cast<const std::byte*>(layout_.cub.result.d_data), base);
  EXPECT_LE(last, base + scratch_bytes_);

  size_t too_small = scratch_bytes_ - 1;
  ScratchLayout untouched;
  EXPECT_EQ(
      cuda::LayOutScratch(static_cast<std::byte*>(d_scratch_), &too_small, kChunk, &untouched),
      cudaErrorInvalidValue);
  EXPECT_EQ(untouched.bytes, 0u);
}

TEST_F(ReduceIntoTest, OneScratchServesEveryFamilyInTurn) {
  MakeScratch();
  const size_t n = 3 * kChunk + 5;
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  const std::vector<float> mixed = testing::MixedSignData(n, seed);
  const std::vector<float> near_one = testing::NearOneData(n, seed);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_in_), n * sizeof(float)), cudaSuccess);
  struct Family {
    KernelId kernel;
    std::vector<Op> ops;
  };
  const std::vector<Op> every(std::begin(kClassicOps), std::end(kClassicOps));
  // Twice round, so each family runs after each other one on the same scratch.
  for (int round = 0; round < 2; ++round) {
    for (const Family& family :
         {Family{KernelId::kSinglePass, every}, Family{KernelId::kCub, every},
          Family{KernelId::kGridStride, {Op::kMin, Op::kMax}},
          Family{KernelId::kAtomicShared, {Op::kMin, Op::kMax}}}) {
      for (Op op : family.ops) {
        SCOPED_TRACE(std::string(GetKernel(family.kernel).name) + " " + std::string(OpName(op)));
        const std::vector<float>& data = op == Op::kProd ? near_one : mixed;
        ASSERT_EQ(cudaMemcpy(d_in_, data.data(), n * sizeof(float), cudaMemcpyHostToDevice),
                  cudaSuccess);
        Partial partial;
        ASSERT_EQ(Reduce(family.kernel, op, n, &partial), cudaSuccess);
        const absl::StatusOr<ReduceResult> result = Finalize(op, partial);
        ASSERT_TRUE(result.ok()) << result.status();
        EXPECT_EQ(CheckAgainstReference(op, ComputeReference(op, data), result->value,
                                        result->index, testing::Float64KernelBound(op, n)),
                  "");
      }
    }
  }
}

TEST_F(ReduceIntoTest, TheLadderRefusesTheOpsItHasNoIndexFor) {
  MakeScratch();
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_in_), 64 * sizeof(float)), cudaSuccess);
  for (Op op : {Op::kArgMin, Op::kArgMax}) {
    const cuda::ChunkLaunch launch{KernelId::kGridStride, op, 0, gpu_, layout_, stream_, true};
    EXPECT_EQ(cuda::ReduceInto(launch, d_in_, 64, 0, d_running_), cudaErrorInvalidValue);
  }
}

}  // namespace
}  // namespace gpureduce::kernels
