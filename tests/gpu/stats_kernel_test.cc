// The stats kernel (kernels::cuda::ReduceStatsInto) directly, no server: every dtype x every op
// (FinalizeOp over the Stats copied back) against an independent reference
// (stats_kernel_reference.h: long double and 128-bit integer loops over the decoded values), at
// sizes 1, 2, 31 and 1000003 and unaligned starts; requests cut into chunks of odd sizes; NaN and
// infinity at the ends and the middle; ties for the arg ops; int64 overflow, int32 sums past 2^31,
// float16 near 65504, PROD with partials beyond float64's range, variance of data with mean 1e6
// and standard deviation 1; determinism. Bounds: sums 1e-12 of sum(|x|), sums of squares 1e-12,
// products n * 2^-52, VAR/STD 1e-10 (the goal), extremes and every integer result exact.
// Without a GPU every test skips.

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/reduction/dtype.h"
#include "common/reduction/op.h"
#include "common/reduction/op_name.h"
#include "common/reduction/op_result.h"
#include "common/reduction/stats.h"
#include "gtest/gtest.h"
#include "kernels/reduce.h"
#include "kernels/scratch_layout.h"
#include "tests/gpu/stats_kernel_reference.h"

namespace gpureduce::kernels::stats_kernel_test {
namespace {

class StatsKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int devices = 0;
    if (cudaError_t error = cudaGetDeviceCount(&devices); error != cudaSuccess || devices == 0) {
      GTEST_SKIP() << "no usable GPU: " << cudaGetErrorName(error);
    }
    cudaDeviceProp props{};
    ASSERT_EQ(cudaGetDeviceProperties(&props, 0), cudaSuccess);
    launch_.gpu = {props.multiProcessorCount, props.maxThreadsPerMultiProcessor,
                   props.major * 10 + props.minor};
    launch_.kernel = KernelId::kSinglePass;
    ASSERT_EQ(cudaStreamCreate(&launch_.stream), cudaSuccess);
    ScratchCarver measure;
    CarveStatsScratch(measure);
    ASSERT_EQ(cudaMalloc(&d_scratch_, measure.end()), cudaSuccess);
    ASSERT_EQ(cudaMemset(d_scratch_, 0, measure.end()), cudaSuccess);
    ScratchCarver carver(static_cast<std::byte*>(d_scratch_));
    launch_.scratch.stats = CarveStatsScratch(carver);
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_running_), sizeof(Stats)), cudaSuccess);
  }
  void TearDown() override {
    cudaFree(d_in_);
    cudaFree(d_scratch_);
    cudaFree(d_running_);
    if (launch_.stream != nullptr) cudaStreamDestroy(launch_.stream);
  }

  // Copies the sample to the device `offset` elements past a 512-byte boundary.
  void Upload(const Sample& s, size_t offset) {
    const size_t bytes = s.bytes.size() + 64;
    if (bytes > capacity_) {
      cudaFree(d_in_);
      capacity_ = bytes;
      ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_in_), capacity_ + 512), cudaSuccess);
    }
    input_ = d_in_ + offset * DTypeSize(s.dtype);
    reference_ = ComputeReference(s);
    ASSERT_EQ(cudaMemcpy(input_, s.bytes.data(), s.bytes.size(), cudaMemcpyHostToDevice),
              cudaSuccess);
  }

  // Reduces the uploaded sample in chunks ending at `cuts` (the last at its size).
  absl::StatusOr<Stats> Run(const Sample& s, const StatsNeeds& needs,
                            std::vector<size_t> cuts = {}) {
    cuts.push_back(s.size());
    size_t begin = 0;
    bool first = true;
    for (size_t end : cuts) {
      if (end <= begin && !(first && end == s.size())) continue;
      launch_.first = first;
      cudaError_t error =
          cuda::ReduceStatsInto(launch_, s.dtype, needs, input_ + begin * DTypeSize(s.dtype),
                                end - begin, begin, d_running_);
      if (error != cudaSuccess) return absl::InternalError(cudaGetErrorName(error));
      first = false;
      begin = end;
    }
    Stats out;
    cudaError_t error = cudaStreamSynchronize(launch_.stream);
    if (error == cudaSuccess) {
      error = cudaMemcpy(&out, d_running_, sizeof(out), cudaMemcpyDeviceToHost);
    }
    if (error != cudaSuccess) return absl::InternalError(cudaGetErrorName(error));
    return out;
  }

  // Every op of `ops` over the uploaded sample `s` from one launch with their combined needs;
  // failures counted and shown.
  void CheckOps(const Sample& s, const std::vector<Op>& ops, const std::string& what,
                std::vector<size_t> cuts = {}) {
    const Reference& r = reference_;
    const absl::StatusOr<Stats> stats = Run(s, NeedsOf(ops), cuts);
    ASSERT_TRUE(stats.ok()) << what << ": " << stats.status();
    for (Op op : ops) {
      for (double ddof : {0.0, 1.0}) {
        const Op base = NanFormOf(op);
        if (ddof != 0 && base != Op::kVar && base != Op::kStd) continue;
        const std::string why = CheckOp(op, s.dtype, r, ddof, *stats);
        if (!why.empty() && ++failures_ <= 30) {
          ADD_FAILURE() << what << " " << DTypeName(s.dtype) << " " << OpName(op) << " ddof "
                        << ddof << " n " << s.size() << ": " << why;
        }
      }
    }
  }

  cuda::ChunkLaunch launch_{};
  void* d_scratch_ = nullptr;
  Stats* d_running_ = nullptr;
  std::byte* d_in_ = nullptr;
  std::byte* input_ = nullptr;
  size_t capacity_ = 0;
  Reference reference_;  // of the uploaded sample
  int failures_ = 0;
};

const std::vector<Op> kEveryOp(std::begin(kAllOps), std::end(kAllOps));
const std::vector<Op> kFiveOps = {Op::kSum, Op::kMin, Op::kMax, Op::kMean, Op::kStd};

TEST_F(StatsKernelTest, EveryDTypeOpSizeAndAlignmentMatchesTheReference) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (DType dtype : kAllDTypes) {
    for (size_t n : {size_t{1}, size_t{2}, size_t{31}, size_t{1000003}}) {
      const Sample mixed = MakeSample(dtype, n, seed + n);
      const Sample near_one = MakeSample(dtype, n, seed + n + 1, true);
      for (size_t offset : {0, 1, 3}) {
        if (n > 31 && offset == 3) continue;
        const std::string where = "offset " + std::to_string(offset);
        // Each op alone (its lean instantiation), then all at once, then the five-op request.
        Upload(mixed, offset);
        for (Op op : kEveryOp) {
          if (NanFormOf(op) != Op::kProd) CheckOps(mixed, {op}, where + " alone");
        }
        CheckOps(mixed, kFiveOps, where + " five ops");
        CheckOps(mixed, {Op::kSum, Op::kSumSquares}, where + " sum+squares");
        CheckOps(mixed, {Op::kVar, Op::kArgMax}, where + " var+argmax");
        Upload(near_one, offset);
        CheckOps(near_one, {Op::kProd}, where + " prod alone");
        CheckOps(near_one, kEveryOp, where + " every op");
      }
    }
  }
  EXPECT_EQ(failures_, 0);
}

TEST_F(StatsKernelTest, ChunksCutAtOddSizesFoldLikeOneRequest) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<size_t> cuts = {1, 2, 33, 4099, 99991, 500000, 500001, 777777};
  for (DType dtype : kAllDTypes) {
    const Sample mixed = MakeSample(dtype, 1000003, seed);
    Upload(mixed, 1);
    CheckOps(mixed, kEveryOp, "chunks", cuts);
    CheckOps(mixed, kFiveOps, "chunks five ops", cuts);
    const Sample near_one = MakeSample(dtype, 1000003, seed + 1, true);
    Upload(near_one, 0);
    CheckOps(near_one, {Op::kProd, Op::kNanProd}, "chunks prod", cuts);
  }
  EXPECT_EQ(failures_, 0);
}

TEST_F(StatsKernelTest, NaNAndInfinityAtTheEndsAndTheMiddle) {
  const size_t n = 1000003;
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64}) {
    const Sample base = MakeSample(dtype, n, 7);
    for (size_t at : {size_t{0}, n / 2, n - 1}) {
      for (double special : {kNan, kInf, -kInf}) {
        Sample s;
        s.dtype = dtype;
        for (size_t i = 0; i < n; ++i)
          PushFloat(s, i == at || (i == at + 999) ? special : base.values[i]);
        Upload(s, 1);
        CheckOps(s, kEveryOp, "special " + std::to_string(special) + " at " + std::to_string(at));
        CheckOps(s, kFiveOps, "special five ops");
        CheckOps(s, {Op::kArgMin}, "special argmin alone");
        CheckOps(s, {Op::kNanArgMax}, "special nanargmax alone");
        CheckOps(s, {Op::kNanVar}, "special nanvar alone");
      }
    }
    // Every element NaN: the NAN forms of the arg ops refuse, the others answer NaN.
    Sample all_nan;
    all_nan.dtype = dtype;
    for (size_t i = 0; i < 1000; ++i) PushFloat(all_nan, kNan);
    Upload(all_nan, 0);
    CheckOps(all_nan, kEveryOp, "all NaN");
  }
  EXPECT_EQ(failures_, 0);
}

TEST_F(StatsKernelTest, ArgOpsReturnTheFirstOfTies) {
  for (DType dtype : kAllDTypes) {
    for (size_t n : {size_t{31}, size_t{1000003}}) {
      Sample s;
      s.dtype = dtype;
      std::mt19937_64 rng(n);
      for (size_t i = 0; i < n; ++i) {
        const int v = static_cast<int>(rng() % 5) - 2;  // -2..2: each extreme many times
        if (IsInteger(dtype)) {
          PushInt(s, v);
        } else {
          PushFloat(s, v == 0 && (i % 2) ? -0.0 : v);
        }
      }
      Upload(s, 3);
      CheckOps(s, kEveryOp, "ties");
      CheckOps(s, {Op::kArgMin}, "ties argmin");
      CheckOps(s, {Op::kArgMax}, "ties argmax");
    }
  }
  EXPECT_EQ(failures_, 0);
}

TEST_F(StatsKernelTest, IntegerSumsAreExactAndWrapLikeNumPy) {
  std::mt19937_64 rng(11);
  Sample big32;  // int32 near its maximum: the sum passes 2^31 many times over, exactly
  big32.dtype = DType::kInt32;
  for (size_t i = 0; i < 1000003; ++i) PushInt(big32, INT32_MAX - int64_t(rng() % 1000));
  Upload(big32, 1);
  CheckOps(big32, kEveryOp, "int32 near max");
  Sample big64;  // int64 near +/- 2^62: the sum wraps, the product overflows
  big64.dtype = DType::kInt64;
  for (size_t i = 0; i < 1000003; ++i) {
    PushInt(big64, (int64_t{1} << 62) + int64_t(rng() % (uint64_t{1} << 40)));
  }
  Upload(big64, 1);
  CheckOps(big64, kEveryOp, "int64 near 2^62");
  Sample mixed64 = big64;  // then back: negative ones bring the sum into range again
  mixed64.bytes.clear();
  mixed64.ints.clear();
  for (size_t i = 0; i < 1000003; ++i)
    PushInt(mixed64, (i % 2 ? -1 : 1) * (INT64_MAX - int64_t(i)));
  Upload(mixed64, 0);
  CheckOps(mixed64, kEveryOp, "int64 alternating");
  for (DType dtype : {DType::kInt32, DType::kInt64}) {
    Sample prod;  // a zero after the overflow: NumPy's product is 0 and fits
    prod.dtype = dtype;
    for (size_t i = 0; i < 100003; ++i) PushInt(prod, i == 90000 ? 0 : (i % 7 == 0 ? 3 : -1));
    Upload(prod, 1);
    CheckOps(prod, {Op::kProd}, "int prod with zero");
    CheckOps(prod, kEveryOp, "int prod with zero, every op");
  }
  EXPECT_EQ(failures_, 0);
}

// Products through +2^63, the factors far apart (other threads, warps and blocks): int64's least
// times -1 is out of range, a later -1 brings it back to -2^63, which fits.
TEST_F(StatsKernelTest, IntegerProductsThroughTwoTo63) {
  constexpr int64_t kLeast = INT64_MIN, kLeast32 = INT32_MIN;
  const std::vector<std::pair<DType, std::vector<int64_t>>> cases = {
      {DType::kInt64, {kLeast, -1, -1}},             // -2^63: fits
      {DType::kInt64, {kLeast, -1}},                 // +2^63: out
      {DType::kInt64, {-1, kLeast, 1, -1}},          // fits
      {DType::kInt64, {kLeast, -1, -1, 2}},          // out
      {DType::kInt64, {kLeast, -1, 0, 3}},           // 0
      {DType::kInt32, {kLeast32, kLeast32, 2, -1}},  // -2^63: fits
      {DType::kInt32, {kLeast32, kLeast32, 2}},      // +2^63: out
  };
  for (const auto& [dtype, factors] : cases) {
    for (size_t n : {size_t{7}, size_t{1000003}}) {
      Sample s;
      s.dtype = dtype;
      for (size_t i = 0; i < n; ++i) {
        const size_t k = i * factors.size() / n;  // factor k at the start of its stretch
        PushInt(s, i * factors.size() % n < factors.size() ? factors[k] : 1);
      }
      Upload(s, 1);
      CheckOps(s, {Op::kProd}, "int product through 2^63");
    }
  }
  EXPECT_EQ(failures_, 0);
}

TEST_F(StatsKernelTest, Float16NearItsLimits) {
  Sample s;
  s.dtype = DType::kFloat16;
  for (size_t i = 0; i < 1000003; ++i) {
    // 65504 (the largest), its neighbours, and subnormals (2^-24 * m).
    const double v = i % 3 == 0   ? 65504.0
                     : i % 3 == 1 ? -65472.0
                                  : std::ldexp(double(i % 1023), -24);
    PushFloat(s, v);
  }
  Upload(s, 1);
  CheckOps(s, kEveryOp, "float16 limits");  // the sum is far past 65504: float16's result is inf
  CheckOps(s, {Op::kSum}, "float16 limits sum");
  EXPECT_EQ(failures_, 0);
}

TEST_F(StatsKernelTest, ProductsCarryTheirExponentApart) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kBFloat16}) {
    Sample zero_first;  // [0] + [1e30] * 200: 0, not 0 * inf
    zero_first.dtype = dtype;
    PushFloat(zero_first, 0.0);
    for (int i = 0; i < 200; ++i) PushFloat(zero_first, 1e30);
    Upload(zero_first, 0);
    const absl::StatusOr<Stats> a = Run(zero_first, NeedsOf(std::vector<Op>{Op::kProd}));
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(FinalizeOp(Op::kProd, dtype, 0, *a)->value, 0.0);
    Sample zero_last;  // [2] * 2000 + [0]: 0
    zero_last.dtype = dtype;
    for (int i = 0; i < 2000; ++i) PushFloat(zero_last, 2.0);
    PushFloat(zero_last, 0.0);
    Upload(zero_last, 1);
    const absl::StatusOr<Stats> b = Run(zero_last, NeedsOf(std::vector<Op>{Op::kProd}));
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(FinalizeOp(Op::kProd, dtype, 0, *b)->value, 0.0);
    Sample back;  // 2^2000 * 2^-2000 = 1 exactly
    back.dtype = dtype;
    for (int i = 0; i < 2000; ++i) PushFloat(back, 2.0);
    for (int i = 0; i < 2000; ++i) PushFloat(back, 0.5);
    Upload(back, 3);
    const absl::StatusOr<Stats> c = Run(back, NeedsOf(std::vector<Op>{Op::kProd}));
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(FinalizeOp(Op::kProd, dtype, 0, *c)->value, 1.0);
  }
}

TEST_F(StatsKernelTest, VarianceOfDataWithALargeMeanIsStable) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal(1e6, 1.0);
  for (DType dtype : {DType::kFloat64, DType::kFloat32}) {
    Sample s;
    s.dtype = dtype;
    for (size_t i = 0; i < 1000003; ++i) PushFloat(s, normal(rng));
    Upload(s, 1);
    CheckOps(s, {Op::kVar, Op::kStd, Op::kNanVar, Op::kNanStd}, "mean 1e6");
    CheckOps(s, kFiveOps, "mean 1e6 five ops");
    CheckOps(s, {Op::kVar}, "mean 1e6 chunks", {1, 12345, 500001});
  }
  EXPECT_EQ(failures_, 0);
}

TEST_F(StatsKernelTest, SameInputSameBits) {
  for (DType dtype : kAllDTypes) {
    const Sample s = MakeSample(dtype, 1000003, 99);
    Upload(s, 1);
    for (const std::vector<Op>* ops : {&kEveryOp, &kFiveOps}) {
      const absl::StatusOr<Stats> a = Run(s, NeedsOf(*ops));
      const absl::StatusOr<Stats> b = Run(s, NeedsOf(*ops));
      ASSERT_TRUE(a.ok() && b.ok());
      EXPECT_EQ(std::memcmp(&*a, &*b, sizeof(Stats)), 0) << DTypeName(dtype);
    }
  }
}

TEST_F(StatsKernelTest, AnEmptyFirstChunkStoresTheEmptyStats) {
  Sample s = MakeSample(DType::kInt32, 5, 1);
  Upload(s, 0);
  launch_.first = true;
  ASSERT_EQ(
      cuda::ReduceStatsInto(launch_, DType::kInt32, NeedsOf(kEveryOp), input_, 0, 0, d_running_),
      cudaSuccess);
  Stats out;
  ASSERT_EQ(cudaStreamSynchronize(launch_.stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(&out, d_running_, sizeof(out), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(out.count, 0u);
  EXPECT_EQ(FinalizeOp(Op::kSum, DType::kInt32, 0, out)->int_value, 0);
  EXPECT_EQ(FinalizeOp(Op::kProd, DType::kInt32, 0, out)->int_value, 1);
}

}  // namespace
}  // namespace gpureduce::kernels::stats_kernel_test
