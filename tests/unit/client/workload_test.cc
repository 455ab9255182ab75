// gpureduce-load's workload: the answers it expects, against the tests' independent reference,
// and the check that turns a disagreeing response into a wrong answer.

#include "client/load/workload.h"

#include <cstring>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/reference.h"

namespace gpureduce::client {
namespace {

using ::testing::HasSubstr;

std::vector<float> Floats(const std::string& bytes) {
  std::vector<float> out(bytes.size() / sizeof(float));
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

gpureduce::Op DomainOp(v1::Op op) { return static_cast<gpureduce::Op>(op); }

v1::ReduceResponse Answer(double value, int64_t index, uint64_t count) {
  v1::ReduceResponse response;
  response.set_value(value);
  response.set_index(index);
  response.set_count(count);
  return response;
}

TEST(WorkloadTest, UnaryPayloadsCarryTheirSpecAndAnswerForEveryOp) {
  for (v1::Op op :
       {v1::SUM, v1::PROD, v1::MIN, v1::MAX, v1::MEAN, v1::SUM_SQUARES, v1::ARGMIN, v1::ARGMAX}) {
    for (uint64_t floats : {uint64_t{1}, uint64_t{2}, uint64_t{31}, uint64_t{1000003}}) {
      WorkloadOptions options;
      options.op = op;
      options.floats = floats;
      options.payloads = 3;
      absl::StatusOr<Workload> workload = Workload::Make(options);
      ASSERT_TRUE(workload.ok()) << workload.status();
      EXPECT_EQ(workload->request_bytes(), floats * 4);
      for (size_t i = 0; i < 3; ++i) {
        const v1::ReduceRequest& request = workload->unary(i);
        EXPECT_EQ(request.spec().op(), op);
        EXPECT_EQ(request.spec().expected_count(), floats);
        const std::vector<float> data = Floats(request.data());
        ASSERT_EQ(data.size(), floats);
        const Expected& expected = workload->unary_expected(i);
        EXPECT_EQ(testing::CheckAgainstReference(DomainOp(op),
                                                 testing::ComputeReference(DomainOp(op), data),
                                                 expected.value, expected.index, 1e-12),
                  "")
            << v1::Op_Name(op) << " n=" << floats;
        EXPECT_EQ(workload->Check(Answer(expected.value, expected.index, floats), expected), "");
      }
      EXPECT_NE(workload->unary(0).data(), workload->unary(1).data()) << "distinct payloads";
    }
  }
}

TEST(WorkloadTest, AStreamCyclesItsChunksAndEndsWithAShortOne) {
  WorkloadOptions options;
  options.op = v1::ARGMAX;
  options.stream_bytes = 10 * 4096 + 12;  // 10 chunks of 1024 floats and 3 floats more
  options.chunk_bytes = 4096;
  options.payloads = 4;
  absl::StatusOr<Workload> workload = Workload::Make(options);
  ASSERT_TRUE(workload.ok()) << workload.status();
  EXPECT_TRUE(workload->stream_head().has_spec());
  EXPECT_EQ(workload->stream_head().spec().expected_count(), 10 * 1024 + 3u);
  EXPECT_TRUE(workload->stream_head().data().empty());
  ASSERT_EQ(workload->stream_chunks(), 11u);
  std::vector<float> all;
  for (size_t k = 0; k < workload->stream_chunks(); ++k) {
    const std::vector<float> chunk = Floats(workload->chunk(k).data());
    EXPECT_EQ(chunk.size(), k < 10 ? 1024u : 3u) << k;
    all.insert(all.end(), chunk.begin(), chunk.end());
  }
  EXPECT_EQ(workload->chunk(0).data(), workload->chunk(4).data()) << "4 payloads in turn";
  const Expected& expected = workload->stream_expected();
  EXPECT_EQ(expected.count, all.size());
  // The maximum appears in every cycle: the answer must be its first occurrence.
  EXPECT_EQ(testing::CheckAgainstReference(gpureduce::Op::kArgMax,
                                           testing::ComputeReference(gpureduce::Op::kArgMax, all),
                                           expected.value, expected.index, 0),
            "");
  EXPECT_LT(expected.index, 4096);
}

TEST(WorkloadTest, TheCheckFindsWrongValuesIndicesAndCounts) {
  WorkloadOptions options;
  options.op = v1::SUM;
  options.floats = 1000;
  absl::StatusOr<Workload> sums = Workload::Make(options);
  ASSERT_TRUE(sums.ok());
  const Expected& sum = sums->unary_expected(0);
  EXPECT_EQ(sums->tolerance(), 1e-9) << "auto is a float64 kernel";
  EXPECT_THAT(sums->Check(Answer(sum.value + sum.scale * 1e-6, -1, 1000), sum), HasSubstr("error"));
  EXPECT_THAT(sums->Check(Answer(sum.value, -1, 999), sum), HasSubstr("count 999"));
  EXPECT_EQ(sums->Check(Answer(sum.value + sum.scale * 1e-12, -1, 1000), sum), "");

  options.op = v1::ARGMIN;
  absl::StatusOr<Workload> argmin = Workload::Make(options);
  ASSERT_TRUE(argmin.ok());
  const Expected& first = argmin->unary_expected(0);
  EXPECT_THAT(argmin->Check(Answer(first.value, first.index + 1, 1000), first), HasSubstr("at"));
}

// What ListKernels says decides the tolerance: a kernel with a lineage is one of the seeds'
// float32 ladder; "auto" is whatever the server's default is.
TEST(WorkloadTest, TheToleranceFollowsWhatTheServerListsAboutTheKernel) {
  v1::ListKernelsResponse listing;
  listing.set_default_kernel("single_pass");
  listing.add_kernels()->set_name("single_pass");
  v1::KernelInfo* ladder = listing.add_kernels();
  ladder->set_name("warp_shuffle");
  ladder->set_lineage("seed 003 step 5");
  v1::KernelInfo* float32_default = listing.add_kernels();
  float32_default->set_name("reduce0");
  float32_default->set_lineage("seed 002 step 0");

  EXPECT_EQ(KernelTolerance("single_pass", listing), kFloat64Tolerance);
  EXPECT_EQ(KernelTolerance("warp_shuffle", listing), 1e-3);
  EXPECT_EQ(KernelTolerance("", listing), kFloat64Tolerance);
  EXPECT_EQ(KernelTolerance("auto", listing), kFloat64Tolerance);
  EXPECT_EQ(KernelTolerance("not_listed", listing), kFloat64Tolerance);
  listing.set_default_kernel("reduce0");
  EXPECT_EQ(KernelTolerance("auto", listing), 1e-3) << "auto is the server's default kernel";

  WorkloadOptions options;
  options.tolerance = KernelTolerance("warp_shuffle", listing);
  EXPECT_EQ(Workload::Make(options)->tolerance(), 1e-3);
  options.tolerance = 0;
  EXPECT_EQ(Workload::Make(options)->tolerance(), kFloat64Tolerance);
}

TEST(WorkloadTest, BadSizesAreRefusedWithTheReason) {
  WorkloadOptions options;
  options.stream_bytes = 4098;
  EXPECT_THAT(Workload::Make(options).status().message(), HasSubstr("multiples of 4"));
  options.stream_bytes = 0;
  options.floats = 0;
  EXPECT_THAT(Workload::Make(options).status().message(), HasSubstr("--floats"));
}

}  // namespace
}  // namespace gpureduce::client
