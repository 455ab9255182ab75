// Array requests' refusals through the real server (issue 23, docs/array-api.md): results, or
// the accumulators a request holds open, over --max-result-bytes are refused before any data is
// read, with both figures; a payload that is not its shape's count, bad axes and segments that do
// not add up are INVALID_ARGUMENT naming the field; and after each, the same server answers an
// array request right. Runs on the test backend (the CPU server; "gpu." with
// GPUREDUCE_TEST_BACKEND=cuda: a GPU server runs array requests on its CPU kernel).

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/array_api_cases.h"
#include "tests/integration/server_process.h"
#include "tests/support/random_data.h"

namespace gpureduce::testing::array_api {
namespace {

using ::testing::HasSubstr;

class ArrayRequestLimitsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { shared_.Start({"--max-result-bytes=4KiB"}); }
  static void TearDownTestSuite() { shared_.Stop(); }

  void SetUp() override {
    REQUIRE_SHARED_SERVER(shared_);
    reducer_ = shared_.get()->Connect();
    h_ = std::make_unique<Harness>(reducer_->stub());
    seed_ = FreshSeed();
  }

  // After every test the server still answers the row sums of a (10, 37) float64 array.
  void TearDown() override {
    if (reducer_ == nullptr) return;  // skipped
    const Array a = RandomArray(v1::FLOAT64, 370, seed_);
    v1::ReduceSpec spec = MakeSpec(v1::FLOAT64, {v1::SUM});
    spec.add_shape(10);
    spec.add_shape(37);
    spec.add_axes(-1);
    const Outcome got = h_->Unary(MakeRequest(spec, a));
    ASSERT_TRUE(got.status.ok()) << got.status.error_message();
    ASSERT_EQ(got.response.results_size(), 1);
    const v1::OpResult& sums = got.response.results(0);
    ASSERT_EQ(sums.shape_size(), 1);
    EXPECT_EQ(sums.shape(0), 10u);
    ASSERT_EQ(sums.data().size(), 10 * sizeof(double));
    for (int r = 0; r < 10; ++r) {
      long double want = 0;
      for (int c = 0; c < 37; ++c) want += a.Float(r * 37 + c);
      double got_sum = 0;
      std::memcpy(&got_sum, sums.data().data() + r * sizeof(double), sizeof(double));
      EXPECT_NEAR(got_sum, static_cast<double>(want), 1e-9 * 37 * 1e3) << "row " << r;
    }
  }

  static void ExpectRefused(const Outcome& got, const std::vector<std::string>& says) {
    EXPECT_EQ(got.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << got.status.error_message();
    for (const std::string& part : says) EXPECT_THAT(got.status.error_message(), HasSubstr(part));
  }

  static v1::ReduceSpec Shaped(v1::DType dtype, std::vector<uint64_t> shape,
                               std::vector<int32_t> axes, std::vector<v1::Op> ops = {v1::SUM}) {
    v1::ReduceSpec spec = MakeSpec(dtype, ops);
    for (uint64_t extent : shape) spec.add_shape(extent);
    for (int32_t axis : axes) spec.add_axes(axis);
    return spec;
  }

  static SharedServer shared_;
  std::unique_ptr<client::ReducerClient> reducer_;
  std::unique_ptr<Harness> h_;
  uint64_t seed_ = 0;
};

SharedServer ArrayRequestLimitsTest::shared_;

TEST_F(ArrayRequestLimitsTest, ServerInfoStatesTheLimit) {
  grpc::ClientContext context;
  v1::ServerInfo info;
  ASSERT_TRUE(reducer_->stub().GetServerInfo(&context, v1::GetServerInfoRequest(), &info).ok());
  EXPECT_EQ(info.max_result_bytes(), 4096u);
}

TEST_F(ArrayRequestLimitsTest, ResultsOverTheLimitAreRefusedBeforeTheData) {
  // 2000 float32 row sums: 7.8 KiB of results. In a stream, the first chunk is refused.
  const Array a = RandomArray(v1::FLOAT32, 8000, seed_);
  const v1::ReduceSpec spec = Shaped(v1::FLOAT32, {2000, 4}, {1});
  ExpectRefused(h_->Unary(MakeRequest(spec, a)),
                {"2000 outputs", "8000B", "--max-result-bytes (4KiB)"});
  ExpectRefused(h_->Stream(Chunks(spec, a.bytes, {100})), {"2000 outputs", "--max-result-bytes"});
}

TEST_F(ArrayRequestLimitsTest, OpenAccumulatorsOverTheLimitAreRefused) {
  // Down the columns of a (3, 100) table: 100 outputs (400 bytes) but 100 open accumulators.
  const Array a = RandomArray(v1::FLOAT32, 300, seed_);
  ExpectRefused(h_->Unary(MakeRequest(Shaped(v1::FLOAT32, {3, 100}, {0}), a)),
                {"keeps 100 outputs open", "--max-result-bytes"});
}

TEST_F(ArrayRequestLimitsTest, APayloadThatIsNotItsShapesCountIsRefused) {
  const Array a = RandomArray(v1::INT32, 11, seed_);
  ExpectRefused(h_->Unary(MakeRequest(Shaped(v1::INT32, {3, 4}, {1}), a)),
                {"ended after 11 elements", "shape (3, 4)", "holds 12"});
  const Array b = RandomArray(v1::INT32, 13, seed_);
  ExpectRefused(h_->Unary(MakeRequest(Shaped(v1::INT32, {3, 4}, {1}), b)),
                {"more elements than its shape (3, 4)"});
  ExpectRefused(h_->Stream(Chunks(Shaped(v1::INT32, {3, 4}, {1}), b.bytes, {5, 3})),
                {"more elements than its shape (3, 4)"});
  v1::ReduceSpec declared = Shaped(v1::INT32, {3, 4}, {1});
  declared.set_expected_count(13);
  ExpectRefused(h_->Unary(MakeRequest(declared, b)), {"spec.expected_count is 13", "holds 12"});
}

TEST_F(ArrayRequestLimitsTest, BadAxesAndSegmentsNameTheField) {
  const Array a = RandomArray(v1::FLOAT64, 24, seed_);
  ExpectRefused(h_->Unary(MakeRequest(Shaped(v1::FLOAT64, {2, 3, 4}, {3}), a)),
                {"spec.axes[0] is 3, out of range"});
  ExpectRefused(h_->Unary(MakeRequest(Shaped(v1::FLOAT64, {2, 3, 4}, {1, -2}), a)),
                {"spec.axes[1] (-2) repeats axis 1"});
  ExpectRefused(h_->Unary(MakeRequest(Shaped(v1::FLOAT64, {2, 3, 4}, {0, 2}, {v1::ARGMIN}), a)),
                {"argmin reduces one axis or every axis"});
  v1::ReduceSpec axes_alone = MakeSpec(v1::FLOAT64, {v1::SUM});
  axes_alone.add_axes(0);
  ExpectRefused(h_->Unary(MakeRequest(axes_alone, a)), {"spec.axes needs spec.shape"});
  v1::ReduceSpec both = Shaped(v1::FLOAT64, {24}, {});
  both.add_segments(24);
  ExpectRefused(h_->Unary(MakeRequest(both, a)), {"spec.shape and spec.segments are both set"});
  v1::ReduceSpec segments = MakeSpec(v1::FLOAT64, {v1::SUM});
  for (uint64_t length : {10, 0, 13}) segments.add_segments(length);  // 23 of 24
  ExpectRefused(h_->Unary(MakeRequest(segments, a)), {"more elements than its 3 segments"});
  v1::ReduceSpec empty_min = MakeSpec(v1::FLOAT64, {v1::MIN});
  for (uint64_t length : {10, 0, 14}) empty_min.add_segments(length);
  ExpectRefused(h_->Unary(MakeRequest(empty_min, a)), {"spec.segments[1] is empty", "min"});
}

}  // namespace
}  // namespace gpureduce::testing::array_api
