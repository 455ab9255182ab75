#include "kernels/kernel_registry.h"

#include "common/reduction/op_name.h"
#include "gtest/gtest.h"

namespace gpureduce::kernels {
namespace {

TEST(KernelRegistryTest, EveryKernelHasANameDescriptionAndOps) {
  ASSERT_FALSE(AllKernels().empty());
  for (const KernelInfo& kernel : AllKernels()) {
    EXPECT_FALSE(kernel.name.empty());
    EXPECT_FALSE(kernel.description.empty()) << kernel.name;
    EXPECT_FALSE(kernel.ops.empty()) << kernel.name;
    EXPECT_EQ(FindKernel(kernel.name), &kernel);
    EXPECT_NE(kernel.name, kAutoKernel) << "auto is a choice, not a kernel";
  }
  EXPECT_EQ(FindKernel("no_such_kernel"), nullptr);
}

TEST(KernelRegistryTest, EveryIdHasItsEntryAndEachBackendItsDefault) {
  for (int id = 0; id <= static_cast<int>(KernelId::kGridStride); ++id) {
    EXPECT_EQ(GetKernel(static_cast<KernelId>(id)).id, static_cast<KernelId>(id)) << id;
  }
  EXPECT_EQ(AllKernels().size(), static_cast<size_t>(KernelId::kGridStride) + 1);
  EXPECT_EQ(GetKernel(DefaultKernel(BackendKind::kCpu)).name, "cpu");
  EXPECT_EQ(GetKernel(DefaultKernel(BackendKind::kCuda)).name, "single_pass");
  EXPECT_EQ(GetKernel(DefaultKernel(BackendKind::kCuda)).backend, BackendKind::kCuda);
}

TEST(KernelRegistryTest, CpuKernelTakesNoBlockSize) {
  const KernelInfo* cpu = FindKernel("cpu");
  ASSERT_NE(cpu, nullptr);
  EXPECT_TRUE(ValidateBlockSize(*cpu, 0).ok());
  const absl::Status status = ValidateBlockSize(*cpu, 256);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("takes no block size"), absl::string_view::npos) << status;
}

TEST(KernelRegistryTest, BlockSizeMustBeAPowerOfTwoInRange) {
  KernelInfo kernel{.name = "k",
                    .description = "d",
                    .lineage = "",
                    .backend = BackendKind::kCuda,
                    .ops = {Op::kSum},
                    .dtypes = {gpureduce::DType::kFloat32},
                    .multi_op = false,
                    .deterministic = true,
                    .default_block_size = 256,
                    .min_block_size = 32,
                    .max_block_size = 1024};
  for (uint32_t ok : {0u, 32u, 64u, 256u, 1024u}) EXPECT_TRUE(ValidateBlockSize(kernel, ok).ok());
  for (uint32_t bad : {16u, 96u, 2048u, 1000u}) {
    const absl::Status status = ValidateBlockSize(kernel, bad);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(status.message().find("from 32 to 1024"), absl::string_view::npos) << status;
  }
}

TEST(KernelRegistryTest, UnsupportedOpNamesTheKernelsThatHaveIt) {
  KernelInfo kernel{.name = "k",
                    .description = "d",
                    .lineage = "",
                    .backend = BackendKind::kCuda,
                    .ops = {Op::kSum},
                    .dtypes = {gpureduce::DType::kFloat32},
                    .multi_op = false,
                    .deterministic = true,
                    .default_block_size = 0,
                    .min_block_size = 0,
                    .max_block_size = 0};
  EXPECT_TRUE(ValidateOp(kernel, Op::kSum).ok());
  const absl::Status status = ValidateOp(kernel, Op::kArgMax);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("cpu"), absl::string_view::npos) << status;
}

TEST(OpTest, NamesRoundTrip) {
  for (Op op : kClassicOps) EXPECT_EQ(ParseOp(OpName(op)), op);
  EXPECT_EQ(ParseOp("SUM_SQUARES"), Op::kSumSquares);
  EXPECT_EQ(ParseOp("ArgMax"), Op::kArgMax);
  EXPECT_FALSE(ParseOp("median").has_value());
}

}  // namespace
}  // namespace gpureduce::kernels
