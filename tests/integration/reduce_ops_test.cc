// Every op at awkward sizes through the real server, unary and streamed, against the float64
// reference on fresh random mixed-sign data.

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "common/reduction/op_name.h"
#include "gtest/gtest.h"
#include "tests/integration/server_process.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"

namespace gpureduce::testing {
namespace {

using gpureduce::Op;

constexpr double kTolerance = 1e-9;  // the default kernels accumulate in float64
constexpr size_t kStreamChunk = 1 << 18;

v1::ReduceSpec SpecFor(Op op) {
  v1::ReduceSpec spec;
  spec.set_op(static_cast<v1::Op>(op));
  return spec;
}

std::vector<float> DataFor(Op op, size_t n, uint64_t seed) {
  return op == Op::kProd ? NearOneData(n, seed) : MixedSignData(n, seed);
}

class ReduceOpsTest : public ::testing::TestWithParam<Op> {
 protected:
  // Unary requests of up to 2^24 floats (64 MiB), beyond the default unary limit.
  static void SetUpTestSuite() { shared_.Start({"--max-request-bytes=64MiB"}); }
  static void TearDownTestSuite() { shared_.Stop(); }
  void SetUp() override {
    REQUIRE_SHARED_SERVER(shared_);
    server_ = shared_.get();
  }

  void ExpectCorrect(const std::vector<float>& data, const absl::StatusOr<v1::ReduceResponse>& got,
                     const char* how) {
    const Op op = GetParam();
    if (data.empty() && !gpureduce::OpHasIdentity(op)) {
      EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << how;
      return;
    }
    ASSERT_TRUE(got.ok()) << how << ": " << got.status();
    EXPECT_EQ(got->count(), data.size()) << how;
    EXPECT_EQ(got->kernel(), TestDefaultKernel()) << how;
    EXPECT_EQ(got->backend(), TestBackend()) << how;
    EXPECT_EQ(got->timing().bytes(), data.size() * sizeof(float)) << how;
    EXPECT_EQ(CheckAgainstReference(op, ComputeReference(op, data), got->value(), got->index(),
                                    kTolerance),
              "")
        << how;
  }

  static SharedServer shared_;
  ServerProcess* server_ = nullptr;
};

SharedServer ReduceOpsTest::shared_;

TEST_P(ReduceOpsTest, UnaryAndStreamMatchTheReferenceAtEverySize) {
  const Op op = GetParam();
  auto reducer = server_->Connect();
  for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{31}, size_t{4097}, size_t{1000003},
                   size_t{1} << 24}) {
    const uint64_t seed = FreshSeed();
    SCOPED_TRACE(SeedTrace(seed) + " n=" + std::to_string(n));
    const std::vector<float> data = DataFor(op, n, seed);
    const auto unary = reducer->Reduce(SpecFor(op), data);
    ExpectCorrect(data, unary, "unary");
    const auto streamed = StreamFloats(*reducer, SpecFor(op), data, kStreamChunk);
    ExpectCorrect(data, streamed, "stream");
    if (unary.ok() && streamed.ok()) {
      EXPECT_EQ(unary->index(), streamed->index());
      if (!std::isnan(unary->value())) {
        EXPECT_NEAR(unary->value(), streamed->value(),
                    kTolerance * std::fabs(double(ComputeReference(op, data).scale)));
      }
      if (n > 0) {
        EXPECT_GT(streamed->timing().chunks(), (n - 1) / kStreamChunk);
      }
    }
  }
}

TEST_P(ReduceOpsTest, OddChunkSizesAndTheValuesField) {
  const Op op = GetParam();
  auto reducer = server_->Connect();
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  const std::vector<float> data = DataFor(op, 100003, seed);
  for (size_t chunk : {size_t{1} << 14, size_t{4099}, size_t{77777}}) {
    ExpectCorrect(data, StreamFloats(*reducer, SpecFor(op), data, chunk), "odd chunks");
  }
  client::CallOptions values;
  values.use_values_field = true;
  ExpectCorrect(data, reducer->Reduce(SpecFor(op), data, values), "repeated float values");
  const std::vector<float> tiny = DataFor(op, 257, seed);
  ExpectCorrect(tiny, StreamFloats(*reducer, SpecFor(op), tiny, 1), "one float per chunk");
}

TEST_P(ReduceOpsTest, NaNInfinityAndTies) {
  const Op op = GetParam();
  auto reducer = server_->Connect();
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  std::vector<float> data = DataFor(op, 500009, seed);
  for (float& x : data) x = std::fmod(x, 100.0f);
  const bool is_min = op == Op::kMin || op == Op::kArgMin;
  data[300001] = data[400003] = is_min ? -500.0f : 500.0f;  // a tie, in two stream chunks
  ExpectCorrect(data, reducer->Reduce(SpecFor(op), data), "tie unary");
  ExpectCorrect(data, StreamFloats(*reducer, SpecFor(op), data, 65537), "tie stream");

  data[123457] = std::numeric_limits<float>::infinity();
  ExpectCorrect(data, reducer->Reduce(SpecFor(op), data), "+inf");
  data[7] = -std::numeric_limits<float>::infinity();
  ExpectCorrect(data, StreamFloats(*reducer, SpecFor(op), data, 65537), "+inf and -inf");

  data[450000] = std::numeric_limits<float>::quiet_NaN();
  data[200000] = std::numeric_limits<float>::quiet_NaN();
  for (bool stream : {false, true}) {
    const auto got = stream ? StreamFloats(*reducer, SpecFor(op), data, 65537)
                            : reducer->Reduce(SpecFor(op), data);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(std::isnan(got->value())) << "stream=" << stream;
    EXPECT_EQ(got->index(), gpureduce::OpReturnsIndex(op) ? 200000 : -1) << "stream=" << stream;
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, ReduceOpsTest, ::testing::ValuesIn(gpureduce::kClassicOps),
                         [](const ::testing::TestParamInfo<Op>& info) {
                           return std::string(gpureduce::OpName(info.param));
                         });

}  // namespace
}  // namespace gpureduce::testing
