// A server with GPUs runs the `cpu` kernel too, on its CPU, when a request names it: it lists
// the kernel, answers every op unary and streamed as the float64 reference does, says that the
// CPU ran it, and refuses it for a request pinned to a GPU. Skips without a GPU.

#include <memory>
#include <vector>

#include "common/reduction/op_name.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/server_process.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"

namespace gpureduce::testing {
namespace {

using gpureduce::Op;
using ::testing::HasSubstr;

v1::ReduceSpec CpuSpec(Op op) {
  v1::ReduceSpec spec;
  spec.set_op(static_cast<v1::Op>(op));
  spec.set_kernel("cpu");
  return spec;
}

// A server of its own per test (--auto-cpu-below=0, ServerProcess's default for cuda): only a
// request that names `cpu` reaches the CPU.
class CpuKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start({}, true, "cuda");
    SKIP_IF_BACKEND_UNAVAILABLE(server.status());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    reducer_ = server_->Connect();
  }

  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<client::ReducerClient> reducer_;
};

TEST_F(CpuKernelTest, TheServerListsItAfterTheGpuKernels) {
  absl::StatusOr<v1::ListKernelsResponse> list = reducer_->ListKernels();
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_GE(list->kernels_size(), 2);
  EXPECT_EQ(list->default_kernel(), "single_pass");
  EXPECT_EQ(list->kernels(0).name(), "single_pass");
  EXPECT_EQ(list->kernels(list->kernels_size() - 1).name(), "cpu");
  absl::StatusOr<v1::ServerInfo> info = reducer_->GetServerInfo();
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->backend(), "cuda") << "the server's devices are its GPUs";
}

TEST_F(CpuKernelTest, EveryOpUnaryAndStreamedRunsOnTheCpuAndMatchesTheReference) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  for (Op op : gpureduce::kClassicOps) {
    const std::vector<float> data =
        op == Op::kProd ? NearOneData(1000003, seed) : MixedSignData(1000003, seed);
    const Reference reference = ComputeReference(op, data);
    for (bool streamed : {false, true}) {
      SCOPED_TRACE(std::string(gpureduce::OpName(op)) + (streamed ? " streamed" : " unary"));
      const absl::StatusOr<v1::ReduceResponse> got =
          streamed ? StreamFloats(*reducer_, CpuSpec(op), data, 65537)
                   : reducer_->Reduce(CpuSpec(op), data);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(CheckAgainstReference(op, reference, got->value(), got->index(), 1e-9), "");
      EXPECT_EQ(got->kernel(), "cpu");
      EXPECT_EQ(got->backend(), "cpu");
      EXPECT_EQ(got->timing().h2d_us(), 0) << "nothing was copied to a GPU";
    }
  }
}

TEST_F(CpuKernelTest, PinnedToAGpuItIsRefused) {
  v1::ReduceSpec spec = CpuSpec(Op::kSum);
  spec.set_device(0);
  const absl::StatusOr<v1::ReduceResponse> got = reducer_->Reduce(spec, {1.0f, 2.0f});
  EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition) << got.status();
  EXPECT_THAT(got.status().message(), HasSubstr("runs on the CPU, but the request pins GPU 0"));
  spec.clear_device();
  EXPECT_TRUE(reducer_->Reduce(spec, {1.0f, 2.0f}).ok()) << "the server serves on";
}

}  // namespace
}  // namespace gpureduce::testing
