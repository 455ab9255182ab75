// The kernel ladder directly (no server): every variant x op x block size x size against the
// float64 reference, each within the bound the variant states. Without a GPU every test skips.
//
// Bounds, with u = 2^-24 (float32 unit roundoff), relative to the reference's scale (sum|x|,
// sum x^2, mean|x|, |product|):
//   MIN, MAX: exact.
//   tree variants, SUM/MEAN/SUM_SQUARES: 2 u (chain + 1), chain = the longest run of dependent
//     adds: the elements one thread adds on its own plus one per tree level and pass.
//   atomic variants, SUM/MEAN/SUM_SQUARES: (n - 1) u, the rigorous bound of a sequential sum in
//     any order. It is loose for mixed signs but not for SUM_SQUARES: small squares are absorbed
//     into a large running sum, always rounding down (measured on the H100: -12.7% at 2^28).
//   PROD, every variant: (n - 1) u, the rigorous first-order bound. Roundings of products near 1
//     are biased, so a float32 tree product drifts linearly: measured 8.9e-4 at 2^20 elements,
//     far beyond a random walk's 4e-5. From n = 2^24 on the bound exceeds 1: float32 products of
//     that many values mean nothing, which is why the default kernels accumulate in float64.

#include "kernels/cuda/ladder/ladder.h"

#include <cuda_runtime_api.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/reduction/finalize.h"
#include "common/reduction/op_name.h"
#include "gtest/gtest.h"
#include "kernels/scratch_layout.h"
#include "kernels/work_bound.h"
#include "tests/gpu/kernel_fixture.h"
#include "tests/gpu/naive_last_warp.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"

namespace gpureduce::kernels {
namespace {

using testing::CheckAgainstReference;
using testing::ComputeReference;

constexpr Op kLadderOps[] = {Op::kSum, Op::kProd, Op::kMin, Op::kMax, Op::kMean, Op::kSumSquares};
constexpr double kUnitRoundoff = 0x1p-24;

bool IsAtomic(const LadderPolicy& policy) {
  return policy.id == KernelId::kAtomicGlobal || policy.id == KernelId::kAtomicShared;
}

double StatedBound(const LadderPolicy& policy, Op op, size_t n, const GpuTraits& gpu) {
  if (op == Op::kMin || op == Op::kMax) return 0;
  if (op == Op::kProd) return kUnitRoundoff * double(n) + 1e-7;
  if (IsAtomic(policy)) return kUnitRoundoff * double(n) + 1e-7;
  double per_thread = policy.loads_per_thread;
  if (policy.id == KernelId::kGridStride) {
    const double threads = double(gpu.multiprocessors) * gpu.max_threads_per_multiprocessor;
    per_thread = std::max(per_thread, std::ceil(double(n) / threads) + 1);
  }
  const double chain = per_thread + 2 * std::ceil(std::log2(double(n) + 1)) + 2;
  return 2 * kUnitRoundoff * (chain + 1);
}

class LadderTest : public testing::KernelFixture {
 protected:
  void TearDown() override {
    cudaFree(d_in_);
    cudaFree(d_scratch_);
    KernelFixture::TearDown();
  }

  void Upload(const std::vector<float>& data) {
    if (data.size() > capacity_) {
      cudaFree(d_in_);
      cudaFree(d_scratch_);
      capacity_ = data.size();
      ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_in_), capacity_ * sizeof(float)),
                cudaSuccess);
      ScratchCarver measure;
      CarveLadderScratch(measure, capacity_);
      ASSERT_EQ(cudaMalloc(&d_scratch_, measure.end()), cudaSuccess);
      ScratchCarver carver(static_cast<std::byte*>(d_scratch_));
      scratch_ = CarveLadderScratch(carver, capacity_);
    }
    ASSERT_EQ(cudaMemcpy(d_in_, data.data(), data.size() * sizeof(float), cudaMemcpyHostToDevice),
              cudaSuccess);
  }

  // Runs one variant over the uploaded data, in launches of `per_launch` elements as the
  // server paces a bounded kernel (0: one launch); returns the finalized result or the CUDA
  // error.
  absl::StatusOr<ReduceResult> Run(const LadderPolicy& policy, Op op, size_t n, unsigned block,
                                   float* ms = nullptr, size_t per_launch = 0) {
    ResetRunning();
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaEventRecord(start, stream_);
    if (per_launch == 0) per_launch = std::max<size_t>(n, 1);
    cudaError_t error = cudaSuccess;
    for (size_t done = 0; done < n && error == cudaSuccess; done += per_launch) {
      error = cuda::LadderReduceInto(policy, op, d_in_ + done, std::min(per_launch, n - done),
                                     block, gpu_, d_running_, scratch_, stream_);
    }
    if (n == 0) {
      error =
          cuda::LadderReduceInto(policy, op, d_in_, 0, block, gpu_, d_running_, scratch_, stream_);
    }
    cudaEventRecord(stop, stream_);
    if (error == cudaSuccess) error = cudaStreamSynchronize(stream_);
    if (ms != nullptr) cudaEventElapsedTime(ms, start, stop);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    if (error != cudaSuccess) return absl::InternalError(cudaGetErrorName(error));
    Partial partial;
    if (cudaError_t read = ReadRunning(&partial); read != cudaSuccess) {
      return absl::InternalError(cudaGetErrorName(read));
    }
    return Finalize(op, partial);
  }

  float* d_in_ = nullptr;
  void* d_scratch_ = nullptr;
  LadderScratch scratch_;  // over d_scratch_, for capacity_ elements
  size_t capacity_ = 0;
};

// GPUREDUCE_LADDER_MAX_N caps the sizes (compute-sanitizer runs the matrix at small sizes).
size_t MaxSize() {
  const char* cap = std::getenv("GPUREDUCE_LADDER_MAX_N");
  return cap != nullptr ? std::strtoull(cap, nullptr, 10) : SIZE_MAX;
}

// GPUREDUCE_LADDER_VARIANTS=a,b runs only those variants.
bool VariantSelected(const LadderPolicy& policy) {
  const char* only = std::getenv("GPUREDUCE_LADDER_VARIANTS");
  return only == nullptr ||
         absl::StrCat(",", only, ",").find(absl::StrCat(",", policy.name, ",")) !=
             std::string::npos;
}
// GPUREDUCE_LADDER_OPS=prod,min runs only those ops.
bool OpSelected(Op op) {
  const char* only = std::getenv("GPUREDUCE_LADDER_OPS");
  return only == nullptr ||
         absl::StrCat(",", only, ",").find(absl::StrCat(",", OpName(op), ",")) != std::string::npos;
}

TEST_F(LadderTest, EveryVariantOpBlockSizeAndSizeMeetsItsBound) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  int failures = 0;
  for (size_t n :
       {size_t{1}, size_t{2}, size_t{31}, size_t{32}, size_t{33}, size_t{1023}, size_t{1025},
        size_t{4097}, size_t{1000003}, size_t{3} << 22, size_t{1} << 24, size_t{1} << 28}) {
    if (n > MaxSize()) break;
    const absl::Time size_started = absl::Now();
    const std::vector<float> mixed = testing::MixedSignData(n, seed + n);
    const std::vector<float> near_one = testing::NearOneData(n, seed + n + 1);
    for (Op op : kLadderOps) {
      if (!OpSelected(op)) continue;
      const std::vector<float>& data = op == Op::kProd ? near_one : mixed;
      const testing::Reference reference = ComputeReference(op, data);
      Upload(data);
      for (const LadderPolicy& policy : kLadder) {
        if (!VariantSelected(policy)) continue;
        // Each cell up to the variant's stated maximum for the op (kernels/work_bound.h);
        // EveryBoundedCellAtItsMaximum runs the maximum itself.
        const uint64_t max_elements = GetWorkBound(policy.id, op).max_elements;
        if (max_elements != 0 && n > max_elements) continue;
        for (unsigned block = policy.min_block_size; block <= policy.max_block_size; block *= 2) {
          const absl::Time cell_started = absl::Now();
          const absl::StatusOr<ReduceResult> result = Run(policy, op, n, block);
          if (const double s = absl::ToDoubleSeconds(absl::Now() - cell_started); s > 1) {
            std::printf("  %s %s block %u n %zu: %.1f s\n", policy.name,
                        std::string(OpName(op)).c_str(), block, n, s);
          }
          const double bound = StatedBound(policy, op, n, gpu_);
          const std::string why =
              result.ok() ? CheckAgainstReference(op, reference, result->value, -1, bound)
                          : result.status().ToString();
          if (!why.empty() && ++failures <= 20) {
            ADD_FAILURE() << policy.name << " " << OpName(op) << " block " << block << " n " << n
                          << ": " << why;
          }
        }
      }
    }
    std::printf("n=%zu done in %.1f s\n", n, absl::ToDoubleSeconds(absl::Now() - size_started));
    std::fflush(stdout);
  }
  EXPECT_EQ(failures, 0);
}

// The data a bounded cell is slowest on: every element improves the running MIN or MAX (so
// every compare-and-swap succeeds), values near one for PROD, mixed signs for the sums.
std::vector<float> WorstCaseData(Op op, size_t n, uint64_t seed) {
  if (op == Op::kProd) return testing::NearOneData(n, seed);
  std::vector<float> data = testing::MixedSignData(n, seed);
  if (op == Op::kMin) std::sort(data.begin(), data.end(), std::greater<float>());
  if (op == Op::kMax) std::sort(data.begin(), data.end());
  return data;
}

// The cost model (kernels/work_bound.h) against this GPU: one launch of a bounded cell's
// elements_per_launch, worst-case data, every block size, must end within 2.5 launch targets;
// an unbounded variant must reduce a whole 4 MiB staging piece within one. Prints the measured
// cost per element beside the model's.
TEST_F(LadderTest, TheCostModelBoundsEveryLaunch) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  const double target_ms = std::chrono::duration<double, std::milli>(kLaunchTarget).count();
  std::printf("%-22s %-11s %6s %10s %9s %12s %12s\n", "variant", "op", "block", "elements", "ms",
              "ns/element", "model ns");
  for (Op op : kLadderOps) {
    for (const LadderPolicy& policy : kLadder) {
      const WorkBound bound = GetWorkBound(policy.id, op);
      const size_t n = bound.elements_per_launch != 0 ? bound.elements_per_launch : size_t{1} << 20;
      const std::vector<float> data = WorstCaseData(op, n, seed + n);
      Upload(data);
      float worst_ms = 0;
      unsigned worst_block = 0;
      for (unsigned block = policy.min_block_size; block <= policy.max_block_size; block *= 2) {
        ASSERT_TRUE(Run(policy, op, n, block).ok());  // warm-up
        float ms = 0;
        ASSERT_TRUE(Run(policy, op, n, block, &ms).ok());
        if (ms > worst_ms) worst_ms = ms, worst_block = block;
      }
      std::printf("%-22s %-11s %6u %10zu %9.3f %12.3f %12.3f\n", policy.name,
                  std::string(OpName(op)).c_str(), worst_block, n, worst_ms, worst_ms * 1e6 / n,
                  bound.ns_per_element);
      EXPECT_LT(worst_ms, (bound.elements_per_launch != 0 ? 2.5 : 1.0) * target_ms)
          << policy.name << " " << OpName(op) << " block " << worst_block;
    }
  }
}

// Every bounded cell at its stated maximum, every block size, in the launches the server paces it
// in: within its stated error bound, and within 1.5 times the request budget the maximum is
// derived from.
TEST_F(LadderTest, EveryBoundedCellAtItsMaximum) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  const double budget_ms = std::chrono::duration<double, std::milli>(kRequestBudget).count();
  for (Op op : kLadderOps) {
    if (!OpSelected(op)) continue;
    for (const LadderPolicy& policy : kLadder) {
      const WorkBound bound = GetWorkBound(policy.id, op);
      if (bound.max_elements == 0 || !VariantSelected(policy)) continue;
      const size_t n = bound.max_elements;
      const std::vector<float> data =
          op == Op::kProd ? testing::NearOneData(n, seed + n) : testing::MixedSignData(n, seed + n);
      const testing::Reference reference = ComputeReference(op, data);
      Upload(data);
      for (unsigned block = policy.min_block_size; block <= policy.max_block_size; block *= 2) {
        float ms = 0;
        const absl::StatusOr<ReduceResult> result =
            Run(policy, op, n, block, &ms, bound.elements_per_launch);
        ASSERT_TRUE(result.ok()) << result.status();
        EXPECT_EQ(CheckAgainstReference(op, reference, result->value, -1,
                                        StatedBound(policy, op, n, gpu_)),
                  "")
            << policy.name << " " << OpName(op) << " block " << block << " n " << n;
        EXPECT_LT(ms, 1.5 * budget_ms) << policy.name << " " << OpName(op) << " block " << block;
        std::printf("  %s %s block %u at its maximum %zu: %.1f ms\n", policy.name,
                    std::string(OpName(op)).c_str(), block, n, ms);
        std::fflush(stdout);
      }
    }
  }
}

TEST_F(LadderTest, NaNPropagatesThroughEveryVariant) {
  std::vector<float> data = testing::MixedSignData(1000003, testing::FreshSeed());
  data[777777] = std::nanf("");
  Upload(data);
  for (const LadderPolicy& policy : kLadder) {
    for (Op op : kLadderOps) {
      const absl::StatusOr<ReduceResult> result = Run(policy, op, data.size(), 0);
      ASSERT_TRUE(result.ok()) << policy.name << ": " << result.status();
      EXPECT_TRUE(std::isnan(result->value)) << policy.name << " " << OpName(op);
    }
  }
}

TEST_F(LadderTest, TreeVariantsAreDeterministic) {
  const std::vector<float> data = testing::MixedSignData(3 << 22, testing::FreshSeed());
  Upload(data);
  for (const LadderPolicy& policy : kLadder) {
    if (!policy.deterministic) continue;
    const absl::StatusOr<ReduceResult> first = Run(policy, Op::kSum, data.size(), 0);
    const absl::StatusOr<ReduceResult> second = Run(policy, Op::kSum, data.size(), 0);
    ASSERT_TRUE(first.ok() && second.ok());
    EXPECT_EQ(first->value, second->value) << policy.name;
  }
}

// Not a benchmark (gpureduce-bench is): one timed run per variant so a run's log shows the
// ladder's shape at 3 x 2^22 floats, seed 003's size. What it prints must be true: each run's
// SUM meets the variant's stated bound, and its time is one a GPU could take (positive, and
// no faster than reading the input at 20 TB/s, beyond any GPU's L2 where the input sits).
TEST_F(LadderTest, PrintsOneTimedRunPerVariant) {
  const size_t n = size_t{3} << 22;
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  const std::vector<float> data = testing::MixedSignData(n, seed);
  const testing::Reference reference = ComputeReference(Op::kSum, data);
  Upload(data);
  constexpr double kImpossibleBytesPerSecond = 20e12;
  const double fastest_ms = n * sizeof(float) / kImpossibleBytesPerSecond * 1e3;
  for (const LadderPolicy& policy : kLadder) {
    const double bound = StatedBound(policy, Op::kSum, n, gpu_);
    const absl::StatusOr<ReduceResult> warm_up = Run(policy, Op::kSum, n, 0);
    ASSERT_TRUE(warm_up.ok()) << policy.name << ": " << warm_up.status();
    float ms = -1;
    const absl::StatusOr<ReduceResult> timed = Run(policy, Op::kSum, n, 0, &ms);
    ASSERT_TRUE(timed.ok()) << policy.name << ": " << timed.status();
    std::printf("%-22s %8.3f ms %8.1f GB/s\n", policy.name, ms, n * 4 / (ms * 1e6));
    EXPECT_EQ(CheckAgainstReference(Op::kSum, reference, warm_up->value, -1, bound), "")
        << policy.name << " (warm-up)";
    EXPECT_EQ(CheckAgainstReference(Op::kSum, reference, timed->value, -1, bound), "")
        << policy.name;
    EXPECT_TRUE(std::isfinite(ms) && ms >= fastest_ms)
        << policy.name << ": " << ms << " ms is not a time this run could take (at least "
        << fastest_ms << " ms)";
  }
}

// The race the seeds' volatile last warp has under independent thread scheduling. Run as a child
// of compute-sanitizer's racecheck, this test only launches one kernel (chosen by
// GPUREDUCE_LAST_WARP): "naive" must be reported, "ladder" (unroll_last_warp) must not.
TEST_F(LadderTest, NaiveVolatileLastWarpIsARaceTheLadderVersionIsNot) {
  if (const char* which = std::getenv("GPUREDUCE_LAST_WARP")) {
    const std::vector<float> data = testing::MixedSignData(64, 1);
    Upload(data);
    if (std::string(which) == "naive") {
      ASSERT_EQ(testing::LaunchNaiveLastWarpSum(d_in_, scratch_.result.d_data), cudaSuccess);
    } else {
      ASSERT_TRUE(Run(*FindLadderPolicy(KernelId::kUnrollLastWarp), Op::kSum, 64, 64).ok());
    }
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    return;
  }
  std::string sanitizer = "/usr/local/cuda/bin/compute-sanitizer";
  if (const char* path = std::getenv("COMPUTE_SANITIZER")) sanitizer = path;
  if (access(sanitizer.c_str(), X_OK) != 0) {
    GTEST_SKIP() << "compute-sanitizer not found at " << sanitizer << " (set COMPUTE_SANITIZER)";
  }
  char self[4096];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  ASSERT_GT(length, 0);
  self[length] = '\0';
  auto racecheck = [&](const char* which) {
    // The child runs this one test whatever shard of the suite this process runs.
    const std::string command =
        "env -u GTEST_TOTAL_SHARDS -u GTEST_SHARD_INDEX GPUREDUCE_LAST_WARP=" + std::string(which) +
        " " + sanitizer + " --tool racecheck --racecheck-report hazard --error-exitcode 3 " + self +
        " --gtest_filter=LadderTest.NaiveVolatileLastWarpIsARaceTheLadderVersionIsNot"
        " > /dev/null 2>&1";
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(racecheck("naive"), 3) << "racecheck should report the unsynchronized last warp";
  EXPECT_EQ(racecheck("ladder"), 0) << "racecheck reported the ladder's __syncwarp last warp";
}

}  // namespace
}  // namespace gpureduce::kernels
