// The segmented and strided SUM kernels (kernels/cuda/segmented) directly, no server: every
// segment and column against a float64 sum on the host, rounded to float32 (within one float32
// ulp of it, plus 1e-12 of the sum of |x| for the order of the float64 adds), over random floats
// of mixed sign and magnitude: segment lengths 0, 1, 2, 31 and mixes whose mean picks each of the
// policy's kernels (lanes per segment, a warp per segment, ranges of the array with a segment
// spanning many), uniform rows, unaligned inputs, column widths that are and are not multiples of
// four; and the same bits twice. Without a GPU every test skips.

#include "kernels/cuda/segmented/segmented_sum.h"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/gpu/kernel_fixture.h"

namespace gpureduce::kernels::cuda {
namespace {

class SegmentedSumTest : public testing::KernelFixture {
 protected:
  void SetUp() override {
    KernelFixture::SetUp();  // skips without a GPU; device 0's traits, a stream
    if (IsSkipped() || HasFatalFailure()) return;
    seed_ = std::random_device{}();
    random_.seed(seed_);
  }

  // n floats of mixed sign and magnitude, `shift` floats after a 256-byte boundary on the device.
  std::vector<float> Upload(uint64_t n, uint64_t shift, float** d_in, void** d_alloc) {
    std::vector<float> host(n);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_int_distribution<int> exponent(-8, 8);
    for (float& x : host) x = std::ldexp(normal(random_), exponent(random_));
    EXPECT_EQ(cudaMalloc(d_alloc, (n + shift) * sizeof(float) + 16), cudaSuccess);
    *d_in = static_cast<float*>(*d_alloc) + shift;
    EXPECT_EQ(cudaMemcpy(*d_in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice),
              cudaSuccess);
    return host;
  }

  // The failures of `got` against the sums of `members(i)` of `host`, one a line (at most 10).
  template <typename MembersT>
  std::string Check(const std::vector<float>& got, const std::vector<float>& host,
                    MembersT members) {
    std::string failures;
    int shown = 0;
    for (size_t i = 0; i < got.size() && shown < 10; ++i) {
      double sum = 0, magnitude = 0;
      members(i, [&](uint64_t e) {
        sum += host[e];
        magnitude += std::fabs(host[e]);
      });
      const float want = static_cast<float>(sum);
      const double ulp = std::fabs(std::nextafter(want, INFINITY) - want);
      if (std::fabs(got[i] - sum) <= ulp + 1e-12 * magnitude) continue;
      failures += absl::StrCat("output ", i, ": ", got[i], ", expected ", want, "\n");
      ++shown;
    }
    return failures;
  }

  // Runs SegmentedSum over `lengths` (as offsets, and as uniform rows when all are equal) with
  // the input `shift` floats past a boundary; expects every segment right and the same bits twice.
  void CheckSegments(const std::vector<uint64_t>& lengths, uint64_t shift) {
    SCOPED_TRACE(absl::StrCat("seed ", seed_, ", ", lengths.size(), " segments, shift ", shift));
    std::vector<uint64_t> offsets = {0};
    for (uint64_t length : lengths) offsets.push_back(offsets.back() + length);
    const uint64_t n = offsets.back();
    float* d_in = nullptr;
    void* d_alloc = nullptr;
    const std::vector<float> host = Upload(n, shift, &d_in, &d_alloc);
    uint64_t* d_offsets = nullptr;
    float* d_out = nullptr;
    void* d_scratch = nullptr;
    const size_t scratch_bytes = SegmentedSumScratchBytes(gpu_, n) + 8;
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_offsets), offsets.size() * 8), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(d_offsets, offsets.data(), offsets.size() * 8, cudaMemcpyHostToDevice),
              cudaSuccess);
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_out), lengths.size() * 4 + 4), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&d_scratch, scratch_bytes), cudaSuccess);
    const bool uniform =
        !lengths.empty() && std::all_of(lengths.begin(), lengths.end(),
                                        [&](uint64_t l) { return l == lengths.front(); });
    std::vector<Segments> forms = {{lengths.size(), d_offsets, 0}};
    if (uniform) forms.push_back({lengths.size(), nullptr, lengths.front()});
    std::vector<float> first;
    for (const Segments& form : forms) {
      for (int pass = 0; pass < 2; ++pass) {
        ASSERT_EQ(cudaMemset(d_out, 0xff, lengths.size() * 4 + 4), cudaSuccess);  // NaN
        ASSERT_EQ(SegmentedSum(gpu_, d_in, n, form, d_out, d_scratch, scratch_bytes, stream_),
                  cudaSuccess);
        ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
        std::vector<float> got(lengths.size());
        ASSERT_EQ(cudaMemcpy(got.data(), d_out, got.size() * 4, cudaMemcpyDeviceToHost),
                  cudaSuccess);
        EXPECT_EQ(Check(got, host,
                        [&](size_t s, auto add) {
                          for (uint64_t e = offsets[s]; e < offsets[s + 1]; ++e) add(e);
                        }),
                  "")
            << (form.d_offsets ? "offsets" : "uniform");
        if (first.empty()) first = got;
        EXPECT_EQ(std::memcmp(first.data(), got.data(), got.size() * 4), 0) << "not the same bits";
      }
    }
    cudaFree(d_alloc);
    cudaFree(d_offsets);
    cudaFree(d_out);
    cudaFree(d_scratch);
  }

  std::vector<uint64_t> Lengths(uint64_t count, uint64_t mean) {
    std::vector<uint64_t> lengths;
    std::uniform_int_distribution<uint64_t> around(0, 2 * mean);
    for (uint64_t s = 0; s < count; ++s)
      lengths.push_back(random_() % 11 == 0 ? 0 : around(random_));
    return lengths;
  }

  uint32_t seed_ = 0;
  std::mt19937_64 random_;
};

TEST_F(SegmentedSumTest, AwkwardLengths) {
  CheckSegments({1}, 0);
  CheckSegments({2, 0, 31, 0}, 1);
  CheckSegments({0, 0, 0}, 0);
  CheckSegments(std::vector<uint64_t>(1000, 31), 3);
}

TEST_F(SegmentedSumTest, EveryKernelOfThePolicy) {
  // Means that pick 1, 2, 4, 8 and 16 lanes per segment, a warp, then ranges.
  for (uint64_t mean : {3, 10, 20, 40, 90, 1000, 50000}) {
    for (uint64_t shift : {0, 1, 3}) CheckSegments(Lengths(mean > 1000 ? 40 : 3000, mean), shift);
  }
}

TEST_F(SegmentedSumTest, UniformRows) {
  for (uint64_t length : {1, 16, 128, 1000, 70001}) {
    CheckSegments(std::vector<uint64_t>(length > 1000 ? 7 : 5000, length), 0);
  }
}

TEST_F(SegmentedSumTest, SegmentsSpanningManyRanges) {
  CheckSegments({5, 3000017, 0, 1, 2000003, 40000, 0}, 1);
}

TEST_F(SegmentedSumTest, ColumnsOfEveryWidth) {
  const std::pair<uint64_t, uint64_t> shapes[] = {{1, 1},     {3, 5},     {1000, 257}, {513, 256},
                                                  {70, 4096}, {20000, 4}, {2, 100003}, {100003, 1}};
  for (const auto& [rows, cols] : shapes) {
    for (uint64_t shift : {0, 1}) {
      SCOPED_TRACE(absl::StrCat("seed ", seed_, ", (", rows, ", ", cols, "), shift ", shift));
      float* d_in = nullptr;
      void* d_alloc = nullptr;
      const std::vector<float> host = Upload(rows * cols, shift, &d_in, &d_alloc);
      float* d_out = nullptr;
      void* d_scratch = nullptr;
      const size_t scratch_bytes = StridedSumScratchBytes(gpu_, rows, cols) + 8;
      ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_out), cols * 4), cudaSuccess);
      ASSERT_EQ(cudaMalloc(&d_scratch, scratch_bytes), cudaSuccess);
      ASSERT_EQ(StridedSum(gpu_, d_in, rows, cols, d_out, d_scratch, scratch_bytes, stream_),
                cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
      std::vector<float> got(cols);
      ASSERT_EQ(cudaMemcpy(got.data(), d_out, cols * 4, cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_EQ(Check(got, host,
                      [&](size_t c, auto add) {
                        for (uint64_t r = 0; r < rows; ++r) add(r * cols + c);
                      }),
                "");
      cudaFree(d_alloc);
      cudaFree(d_out);
      cudaFree(d_scratch);
    }
  }
}

}  // namespace
}  // namespace gpureduce::kernels::cuda
