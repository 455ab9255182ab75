// ResolveSpec: the wire's ReduceSpec becomes a RequestSpec, or a precise error, for a CPU and a
// CUDA backend (a stand-in: resolving needs only the backend's kind).

#include "server/request_spec.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/stand_in_backend.h"
#include "tests/support/wire.h"

namespace gpureduce::server {
namespace {

using kernels::BackendKind;
using kernels::KernelId;
using ::testing::HasSubstr;
using testing::Spec;
using testing::StandInBackend;

const StandInBackend kCpu(BackendKind::kCpu);
const StandInBackend kCuda(BackendKind::kCuda);

TEST(ResolveSpecTest, EveryOpOfTheWireMapsToItsDomainOp) {
  const std::pair<v1::Op, gpureduce::Op> pairs[] = {
      {v1::SUM, gpureduce::Op::kSum},       {v1::PROD, gpureduce::Op::kProd},
      {v1::MIN, gpureduce::Op::kMin},       {v1::MAX, gpureduce::Op::kMax},
      {v1::MEAN, gpureduce::Op::kMean},     {v1::SUM_SQUARES, gpureduce::Op::kSumSquares},
      {v1::ARGMIN, gpureduce::Op::kArgMin}, {v1::ARGMAX, gpureduce::Op::kArgMax}};
  for (const auto& [wire, op] : pairs) {
    absl::StatusOr<runtime::RequestSpec> spec = ResolveSpec(Spec(wire), kCpu);
    ASSERT_TRUE(spec.ok()) << v1::Op_Name(wire) << ": " << spec.status();
    EXPECT_EQ(spec->op, op) << v1::Op_Name(wire);
    EXPECT_EQ(gpureduce::OpName(op), absl::AsciiStrToLower(v1::Op_Name(wire)));
  }
}

TEST(ResolveSpecTest, EmptyOrAutoKernelIsTheBackendsDefault) {
  for (const std::string& name : {std::string(), std::string("auto")}) {
    EXPECT_EQ(ResolveSpec(Spec(v1::SUM, name), kCpu)->kernel, KernelId::kCpu);
    EXPECT_EQ(ResolveSpec(Spec(v1::SUM, name), kCuda)->kernel, KernelId::kSinglePass);
    EXPECT_TRUE(ResolveSpec(Spec(v1::SUM, name), kCuda)->auto_kernel) << "the server may choose";
  }
  EXPECT_FALSE(ResolveSpec(Spec(v1::SUM, "single_pass"), kCuda)->auto_kernel);
}

TEST(ResolveSpecTest, ANamedKernelResolvesToItsIdAndKeepsTheRest) {
  const absl::StatusOr<runtime::RequestSpec> spec =
      ResolveSpec(Spec(v1::SUM_SQUARES, "warp_shuffle", 128, 1000003), kCuda);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->kernel, KernelId::kWarpShuffle);
  EXPECT_EQ(spec->op, gpureduce::Op::kSumSquares);
  EXPECT_EQ(spec->block_size, 128u);
  EXPECT_EQ(spec->expected_count, 1000003u);
  EXPECT_EQ(ResolveSpec(Spec(v1::ARGMAX, "cub"), kCuda)->kernel, KernelId::kCub);
}

TEST(ResolveSpecTest, AMissingOrUnknownOpListsTheOps) {
  for (int op : {0, 20, -1}) {
    const absl::Status status = ResolveSpec(Spec(static_cast<v1::Op>(op)), kCpu).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << op;
    EXPECT_THAT(status.message(),
                HasSubstr("SUM, PROD, MIN, MAX, MEAN, SUM_SQUARES, ARGMIN, ARGMAX, NANSUM"));
  }
  EXPECT_THAT(ResolveSpec(Spec(v1::OP_UNSPECIFIED), kCpu).status().message(),
              HasSubstr("op is not set"));
}

TEST(ResolveSpecTest, AnUnknownKernelListsThisServersKernels) {
  const absl::Status status = ResolveSpec(Spec(v1::SUM, "fastest"), kCuda).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("unknown kernel 'fastest'"));
  EXPECT_THAT(status.message(), HasSubstr("auto, single_pass, cub, atomic_global"));
  EXPECT_THAT(status.message(), ::testing::Not(HasSubstr("cpu,")));
}

TEST(ResolveSpecTest, AKernelOfTheOtherBackendIsAFailedPrecondition) {
  const absl::Status on_cpu = ResolveSpec(Spec(v1::SUM, "single_pass"), kCpu).status();
  EXPECT_EQ(on_cpu.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(on_cpu.message(), HasSubstr("needs the cuda backend"));
  EXPECT_THAT(on_cpu.message(), HasSubstr("kernels available here: auto, cpu"));
  const absl::Status on_cuda = ResolveSpec(Spec(v1::SUM, "cpu"), kCuda).status();
  EXPECT_EQ(on_cuda.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(on_cuda.message(), HasSubstr("needs the cpu backend"));
}

TEST(ResolveSpecTest, AServerWithGpusRunsTheCpuKernelToo) {
  const StandInBackend gpus_and_cpu(BackendKind::kCuda, BackendKind::kCpu);
  const absl::StatusOr<runtime::RequestSpec> spec =
      ResolveSpec(Spec(v1::ARGMIN, "cpu"), gpus_and_cpu);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->kernel, KernelId::kCpu);
  EXPECT_FALSE(spec->auto_kernel);
  EXPECT_EQ(ResolveSpec(Spec(v1::SUM), gpus_and_cpu)->kernel, KernelId::kSinglePass);
  const absl::Status unknown = ResolveSpec(Spec(v1::SUM, "fastest"), gpus_and_cpu).status();
  EXPECT_THAT(unknown.message(), HasSubstr("this server runs: auto, single_pass, cub,"));
  EXPECT_TRUE(absl::EndsWith(unknown.message(), ", cpu")) << unknown.message();
}

TEST(ResolveSpecTest, AnOpTheKernelLacksNamesTheKernelsThatHaveIt) {
  const absl::Status status = ResolveSpec(Spec(v1::ARGMIN, "sequential"), kCuda).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("'sequential' does not support argmin"));
  EXPECT_THAT(status.message(), HasSubstr("single_pass"));
}

TEST(ResolveSpecTest, BlockSizesAreCheckedAgainstTheKernel) {
  EXPECT_TRUE(ResolveSpec(Spec(v1::SUM, "sequential", 1024), kCuda).ok());
  const absl::Status odd = ResolveSpec(Spec(v1::SUM, "sequential", 96), kCuda).status();
  EXPECT_EQ(odd.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(odd.message(), HasSubstr("from 32 to 1024"));
  const absl::Status small = ResolveSpec(Spec(v1::SUM, "unroll_last_warp", 32), kCuda).status();
  EXPECT_THAT(small.message(), HasSubstr("from 64 to 1024"));
  const absl::Status none = ResolveSpec(Spec(v1::SUM, "", 256), kCpu).status();
  EXPECT_EQ(none.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(none.message(), HasSubstr("takes no block size"));
}

}  // namespace
}  // namespace gpureduce::server
