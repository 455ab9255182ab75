// A request pinned to a device, and what GetServerInfo says each device is doing, through the
// real server (the CPU backend has one device, 0; the GPU suite runs it on the CUDA backend).

#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/integration/server_process.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"

namespace gpureduce::testing {
namespace {

class DevicesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { shared_.Start({}); }
  static void TearDownTestSuite() { shared_.Stop(); }
  void SetUp() override {
    REQUIRE_SHARED_SERVER(shared_);
    reducer_ = shared_.get()->Connect();
  }

  static SharedServer shared_;
  std::unique_ptr<client::ReducerClient> reducer_;
};

SharedServer DevicesTest::shared_;

TEST_F(DevicesTest, ARequestPinnedToDeviceZeroRunsThereAndIsRight) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  for (size_t n : {size_t{1}, size_t{31}, size_t{1000003}}) {
    const std::vector<float> data = MixedSignData(n, seed + n);
    v1::ReduceSpec spec;
    spec.set_op(v1::SUM);
    spec.set_device(0);
    absl::StatusOr<v1::ReduceResponse> got = reducer_->Reduce(spec, data);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->backend(), TestBackend());
    ASSERT_EQ(got->device_indices_size(), 1);
    EXPECT_EQ(got->device_indices(0), 0);
    EXPECT_EQ(
        CheckAgainstReference(gpureduce::Op::kSum, ComputeReference(gpureduce::Op::kSum, data),
                              got->value(), got->index(), 1e-9),
        "");
  }
}

TEST_F(DevicesTest, ADeviceTheServerDoesNotUseOrANegativeOneIsRefused) {
  v1::ReduceSpec spec;
  spec.set_op(v1::MAX);
  spec.set_device(1000);
  const std::vector<float> data = {1.0f, 2.0f};
  absl::StatusOr<v1::ReduceResponse> elsewhere = reducer_->Reduce(spec, data);
  EXPECT_EQ(elsewhere.status().code(), absl::StatusCode::kFailedPrecondition) << elsewhere.status();
  EXPECT_TRUE(absl::StrContains(elsewhere.status().message(), "1000")) << elsewhere.status();
  spec.set_device(-1);
  absl::StatusOr<v1::ReduceResponse> negative = reducer_->Reduce(spec, data);
  EXPECT_EQ(negative.status().code(), absl::StatusCode::kInvalidArgument) << negative.status();
}

TEST_F(DevicesTest, ServerInfoSaysWhatEachDeviceIsDoingAndItsLoadGoesBackToZero) {
  const std::vector<float> data = MixedSignData(300007, FreshSeed());
  v1::ReduceSpec spec;
  spec.set_op(v1::ARGMIN);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(reducer_->Reduce(spec, data).ok());
  absl::StatusOr<v1::ServerInfo> info = reducer_->GetServerInfo();
  ASSERT_TRUE(info.ok()) << info.status();
  ASSERT_GE(info->devices_size(), 1);
  EXPECT_FALSE(info->degraded());
  for (const v1::DeviceInfo& device : info->devices()) {
    EXPECT_FALSE(device.lost()) << device.index();
    EXPECT_EQ(device.requests(), 0u) << "device " << device.index() << " keeps a finished request";
    EXPECT_EQ(device.outstanding_bytes(), 0u) << device.index();
  }
}

}  // namespace
}  // namespace gpureduce::testing
