// single_pass, the production kernel, directly (no server): every op at awkward sizes and every
// input alignment against the float64 reference, NaN and ties, chunks folded into a running
// partial, determinism. Bounds (relative to the reference's scale): SUM, MEAN, SUM_SQUARES 1e-9
// (the accuracy goal of the float64 accumulation); PROD n * 2^-53 (the rigorous bound of a
// float64 product); MIN, MAX, ARGMIN, ARGMAX exact. Without a GPU every test skips.

#include "kernels/cuda/single_pass/single_pass.h"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/reduction/finalize.h"
#include "common/reduction/op_name.h"
#include "gtest/gtest.h"
#include "kernels/scratch_layout.h"
#include "tests/gpu/kernel_fixture.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"

namespace gpureduce::kernels {
namespace {

using testing::CheckAgainstReference;
using testing::ComputeReference;

// GPUREDUCE_SINGLE_PASS_MAX_N caps the sizes of the matrix (compute-sanitizer runs it small).
size_t MaxSize() {
  const char* cap = std::getenv("GPUREDUCE_SINGLE_PASS_MAX_N");
  return cap != nullptr ? std::strtoull(cap, nullptr, 10) : SIZE_MAX;
}

class SinglePassTest : public testing::KernelFixture {
 protected:
  void SetUp() override {
    KernelFixture::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ScratchCarver measure;
    CarveSinglePassScratch(measure);
    ASSERT_EQ(cudaMalloc(&d_scratch_, measure.end()), cudaSuccess);
    ASSERT_EQ(cudaMemset(d_scratch_, 0, measure.end()), cudaSuccess);
    ScratchCarver carver(static_cast<std::byte*>(d_scratch_));
    launch_ = {gpu_, CarveSinglePassScratch(carver), stream_};
  }
  void TearDown() override {
    cudaFree(d_in_);
    cudaFree(d_scratch_);
    KernelFixture::TearDown();
  }

  // Copies `data` to the device `offset` floats past a 256-byte boundary.
  void Upload(const std::vector<float>& data, size_t offset = 0) {
    if (data.size() + 4 > capacity_) {
      cudaFree(d_in_);
      capacity_ = data.size() + 4;
      ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_in_), capacity_ * sizeof(float)),
                cudaSuccess);
    }
    input_ = d_in_ + offset;
    ASSERT_EQ(cudaMemcpy(input_, data.data(), data.size() * sizeof(float), cudaMemcpyHostToDevice),
              cudaSuccess);
  }

  // Reduces input_[begin, end) into the running partial (reset first when `fresh`).
  absl::Status Fold(Op op, size_t begin, size_t end, bool fresh) {
    if (fresh) ResetRunning();
    cudaError_t error =
        cuda::SinglePassReduce(launch_, op, input_ + begin, end - begin, begin, d_running_, true);
    if (error == cudaSuccess) error = cudaStreamSynchronize(stream_);
    if (error != cudaSuccess) return absl::InternalError(cudaGetErrorName(error));
    return absl::OkStatus();
  }

  absl::StatusOr<ReduceResult> Result(Op op) {
    Partial partial;
    if (ReadRunning(&partial) != cudaSuccess) {
      return absl::InternalError("copying the result back failed");
    }
    return Finalize(op, partial);
  }

  absl::StatusOr<ReduceResult> Run(Op op, size_t n) {
    if (absl::Status folded = Fold(op, 0, n, true); !folded.ok()) return folded;
    return Result(op);
  }

  // "" when `op` over the uploaded `data` matches the reference.
  std::string Check(Op op, const std::vector<float>& data) {
    const absl::StatusOr<ReduceResult> result = Run(op, data.size());
    if (!result.ok()) return result.status().ToString();
    return CheckAgainstReference(op, ComputeReference(op, data), result->value, result->index,
                                 testing::Float64KernelBound(op, data.size()));
  }

  cuda::SinglePassLaunch launch_{};
  void* d_scratch_ = nullptr;
  float* d_in_ = nullptr;
  float* input_ = nullptr;
  size_t capacity_ = 0;
};

TEST_F(SinglePassTest, EveryOpSizeAndAlignmentMatchesTheReference) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  int failures = 0;
  for (size_t n : {size_t{1}, size_t{2}, size_t{3}, size_t{4}, size_t{5}, size_t{31}, size_t{33},
                   size_t{1023}, size_t{1025}, size_t{4097}, size_t{65537}, size_t{1000003},
                   size_t{3} << 22, (size_t{1} << 24) + 3, (size_t{1} << 28) + 1}) {
    if (n > MaxSize()) break;
    const std::vector<float> mixed = testing::MixedSignData(n, seed + n);
    const std::vector<float> near_one = testing::NearOneData(n, seed + n + 1);
    // Every alignment up to a million elements; the largest sizes at offsets 0 and 1.
    for (size_t offset : {0, 1, 2, 3}) {
      if (n > 1000003 && offset > 1) break;
      for (Op op : kClassicOps) {
        const std::vector<float>& data = op == Op::kProd ? near_one : mixed;
        Upload(data, offset);
        const std::string why = Check(op, data);
        if (!why.empty() && ++failures <= 20) {
          ADD_FAILURE() << OpName(op) << " n " << n << " offset " << offset << ": " << why;
        }
      }
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST_F(SinglePassTest, NaNPropagatesAndArgOpsReturnTheFirstNaN) {
  const size_t n = 1000003;
  std::vector<float> data = testing::MixedSignData(n, testing::FreshSeed());
  for (size_t first_nan : {size_t{0}, size_t{5}, size_t{777777}, n - 1}) {
    std::vector<float> with_nan = data;
    with_nan[first_nan] = std::nanf("");
    if (first_nan + 1000 < n) with_nan[first_nan + 1000] = std::nanf("");
    Upload(with_nan, 1);
    for (Op op : kClassicOps) {
      const absl::StatusOr<ReduceResult> result = Run(op, n);
      ASSERT_TRUE(result.ok()) << result.status();
      EXPECT_TRUE(std::isnan(result->value)) << OpName(op) << " first NaN at " << first_nan;
      if (OpReturnsIndex(op)) {
        EXPECT_EQ(result->index, static_cast<int64_t>(first_nan)) << OpName(op);
      }
    }
  }
}

TEST_F(SinglePassTest, ArgOpsReturnTheFirstOfTiedExtremes) {
  const size_t n = (size_t{1} << 22) + 7;
  std::vector<float> data = testing::MixedSignData(n, testing::FreshSeed());
  // Ties far apart land in different blocks and threads; the first must win.
  for (size_t i : {size_t{3000001}, size_t{123457}, size_t{4000000}}) {
    data[i] = -5000.0f;
    data[i + 1] = 5000.0f;
  }
  Upload(data, 3);
  absl::StatusOr<ReduceResult> result = Run(Op::kArgMin, n);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->index, 123457);
  EXPECT_EQ(result->value, -5000.0);
  result = Run(Op::kArgMax, n);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->index, 123458);
  // Every element equal: index 0.
  Upload(std::vector<float>(100003, 2.5f), 2);
  result = Run(Op::kArgMin, 100003);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->index, 0);
  EXPECT_EQ(result->value, 2.5);
}

TEST_F(SinglePassTest, InfinitiesBehaveAsIeeeSays) {
  std::vector<float> data = testing::MixedSignData(70001, testing::FreshSeed());
  data[100] = std::numeric_limits<float>::infinity();
  Upload(data);
  absl::StatusOr<ReduceResult> result = Run(Op::kSum, data.size());
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->value, std::numeric_limits<double>::infinity());
  result = Run(Op::kArgMax, data.size());
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->index, 100);
  data[60000] = -std::numeric_limits<float>::infinity();
  Upload(data);
  result = Run(Op::kSum, data.size());
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(std::isnan(result->value));
  result = Run(Op::kMin, data.size());
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->value, -std::numeric_limits<double>::infinity());
}

TEST_F(SinglePassTest, ChunksFoldIntoTheRunningPartialLikeTheWholeArray) {
  const size_t n = 3000017;
  const std::vector<float> data = testing::MixedSignData(n, testing::FreshSeed());
  Upload(data);
  // Uneven chunks, some misaligned, one of a single element.
  const size_t cuts[] = {0, 1, 4099, 1000000, 1000001, 2500003, n};
  for (Op op : {Op::kSum, Op::kMin, Op::kArgMin, Op::kArgMax, Op::kSumSquares}) {
    for (size_t c = 0; c + 1 < std::size(cuts); ++c) {
      ASSERT_TRUE(Fold(op, cuts[c], cuts[c + 1], c == 0).ok());
    }
    const absl::StatusOr<ReduceResult> result = Result(op);
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(CheckAgainstReference(op, ComputeReference(op, data), result->value, result->index,
                                    testing::Float64KernelBound(op, n)),
              "")
        << OpName(op);
  }
}

TEST_F(SinglePassTest, SumIsDeterministic) {
  const std::vector<float> data = testing::MixedSignData(size_t{3} << 22, testing::FreshSeed());
  Upload(data, 1);
  const absl::StatusOr<ReduceResult> first = Run(Op::kSum, data.size());
  for (int i = 0; i < 5; ++i) {
    const absl::StatusOr<ReduceResult> again = Run(Op::kSum, data.size());
    ASSERT_TRUE(first.ok() && again.ok());
    EXPECT_EQ(first->value, again->value);
  }
}

}  // namespace
}  // namespace gpureduce::kernels
