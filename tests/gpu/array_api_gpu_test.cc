// The array-API matrix (tests/integration/array_api_cases.h) against a CUDA server, kernel auto
// (single_pass runs every dtype and op on the GPU), plus the sizes only a GPU suite can afford:
// 2^26 + 3 float16 and float64 elements. Without a GPU every test skips with the reason.
// (tests/integration/array_api_test.cc, array_api_edges_test.cc and array_api_refusals_test.cc
// also run under the "gpu." prefix against a CUDA server: the refusals and the exact cases; this
// suite is the matrix at GPU sizes.)

#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "tests/integration/array_api_cases.h"
#include "tests/integration/server_process.h"
#include "tests/support/random_data.h"

namespace gpureduce::testing::array_api {
namespace {

constexpr size_t kMillion = 1000003;
constexpr size_t kLarge = (size_t{1} << 26) + 3;

class ArrayApiGpuTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { shared_.Start({"--max-request-bytes=64MiB"}, "cuda"); }
  static void TearDownTestSuite() { shared_.Stop(); }

  void SetUp() override {
    REQUIRE_SHARED_SERVER(shared_);
    reducer_ = shared_.get()->Connect();
    h_ = std::make_unique<Harness>(reducer_->stub(), "auto");
    seed_ = FreshSeed();
  }

  // The answer came from the GPU's single_pass.
  void ExpectOnTheGpu(const Array& a) {
    const Outcome got = h_->Reduce(a, {v1::SUM, v1::STD});
    ASSERT_TRUE(got.status.ok()) << got.status.error_message();
    EXPECT_EQ(got.response.backend(), "cuda");
    EXPECT_EQ(got.response.kernel(), "single_pass");
  }

  static SharedServer shared_;
  std::unique_ptr<client::ReducerClient> reducer_;
  std::unique_ptr<Harness> h_;
  uint64_t seed_ = 0;
};

SharedServer ArrayApiGpuTest::shared_;

TEST_F(ArrayApiGpuTest, EveryDTypeAndOpAtSmallSizes) {
  SCOPED_TRACE(SeedTrace(seed_));
  for (v1::DType dtype : AllDTypes()) {
    ExpectOnTheGpu(RandomArray(dtype, 31, seed_));
    for (size_t n : {1, 2, 31}) RunMatrix(*h_, RandomArray(dtype, n, seed_ + n), true, "random");
  }
}

TEST_F(ArrayApiGpuTest, EveryDTypeAndOpAtAMillionAndThree) {
  SCOPED_TRACE(SeedTrace(seed_));
  for (v1::DType dtype : AllDTypes()) {
    const Array a = RandomArray(dtype, kMillion, seed_ + dtype);
    RunMatrix(*h_, a, true, "random");
  }
}

TEST_F(ArrayApiGpuTest, NanAndInfAtTheStartTheMiddleAndTheEnd) {
  SCOPED_TRACE(SeedTrace(seed_));
  // Sizes of one block to several (65539 elements spans blocks and a ragged tail): the client's
  // long-double reference of every op over each placement is this test's time (at a million
  // elements 183 s on the H100 host; the GPU's part is microseconds).
  for (v1::DType dtype : {v1::FLOAT32, v1::FLOAT16, v1::BFLOAT16, v1::FLOAT64}) {
    for (size_t n : {size_t{1}, size_t{2}, size_t{31}, size_t{4099}, size_t{65539}}) {
      RunSpecials(*h_, dtype, n, seed_ + n);
    }
  }
}

TEST_F(ArrayApiGpuTest, ArgOpsAnswerTheFirstOfTies) {
  SCOPED_TRACE(SeedTrace(seed_));
  const std::vector<v1::Op> ops = {v1::ARGMIN,    v1::ARGMAX, v1::NANARGMIN,
                                   v1::NANARGMAX, v1::MIN,    v1::MAX};
  for (v1::DType dtype : AllDTypes()) {
    for (size_t n : {size_t{2}, size_t{31}, kMillion}) {
      const Array a = TiesArray(dtype, n, seed_ + n);
      ExpectAnswers(h_->Reduce(a, ops), ops, a, 0, "ties");
    }
  }
}

TEST_F(ArrayApiGpuTest, FiveOpsAndDdofs) {
  SCOPED_TRACE(SeedTrace(seed_));
  const std::vector<v1::Op> five = {v1::SUM, v1::MIN, v1::MAX, v1::MEAN, v1::STD};
  for (v1::DType dtype : AllDTypes()) {
    const Array a = RandomArray(dtype, kMillion, seed_ + dtype);
    ExpectAnswers(h_->Reduce(a, five), five, a, 0, "five ops");
    for (double ddof : {1.0, static_cast<double>(kMillion), kMillion + 1.0}) {
      ExpectAnswers(h_->Reduce(a, {v1::VAR, v1::NANSTD}, ddof), {v1::VAR, v1::NANSTD}, a, ddof,
                    "ddof");
    }
  }
}

TEST_F(ArrayApiGpuTest, StreamsCutInsideElements) {
  SCOPED_TRACE(SeedTrace(seed_));
  std::vector<v1::Op> ops;
  for (v1::Op op : AllOps()) {
    if (BaseOf(op) != v1::VAR && BaseOf(op) != v1::STD && op != v1::SUM_SQUARES) {
      ops.push_back(op);
    }
  }
  for (v1::DType dtype : {v1::FLOAT64, v1::INT64, v1::FLOAT16}) {
    const Array a = RandomArray(dtype, kMillion, seed_ + dtype);
    ExpectStreamMatchesUnary(*h_, a, ops, {1, 3, 7, 5, 65536 + 3, 4093, 131072 + 1, 9}, "odd cuts");
    const std::vector<v1::ReduceChunk> chunks =
        Chunks(MakeSpec(dtype, AllOps()), a.bytes, {(1 << 20) + 5, 3});
    ExpectAnswers(h_->Stream(chunks), AllOps(), a, 0, "streamed, every op");
  }
}

// 2^26 + 3 elements (128 MiB of float16, 512 MiB of float64): past the unary limit, streamed in
// 4 MiB chunks cut inside elements; several ops in one pass.
TEST_F(ArrayApiGpuTest, TwoToTheTwentySixPlusThree) {
  SCOPED_TRACE(SeedTrace(seed_));
  // Six ops: the client's long-double reference of each over 2^26 elements is most of the time.
  const std::vector<v1::Op> ops = {v1::SUM, v1::MIN, v1::MAX, v1::STD, v1::PROD, v1::NANARGMIN};
  for (v1::DType dtype : {v1::FLOAT16, v1::FLOAT64}) {
    Array a = RandomArray(dtype, kLarge, seed_ + dtype);
    const std::vector<v1::ReduceChunk> chunks =
        Chunks(MakeSpec(dtype, ops, 0, "auto"), a.bytes,
               {(4 << 20) - 3, (4 << 20) - 1});  // the suite's server takes chunks of up to 4 MiB
    const Outcome got = h_->Stream(chunks);
    ExpectAnswers(got, ops, a, 0, "2^26 + 3");
    if (got.status.ok()) {
      EXPECT_EQ(got.response.backend(), "cuda");
    }
    // With a NaN near the end: the NaN forms skip it.
    Set(a, kLarge - 2, std::numeric_limits<double>::quiet_NaN());
    ExpectAnswers(h_->Stream(Chunks(MakeSpec(dtype, ops, 0, "auto"), a.bytes, {(4 << 20) - 5})),
                  ops, a, 0, "2^26 + 3 with a NaN");
  }
}

}  // namespace
}  // namespace gpureduce::testing::array_api
