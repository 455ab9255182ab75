// The cost model's arithmetic and refusals (kernels/work_bound.h); its figures are measured
// against the GPU in tests/gpu/ladder_test.cc.

#include "kernels/work_bound.h"

#include <chrono>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/kernel_registry.h"

namespace gpureduce::kernels {
namespace {

TEST(WorkBoundTest, OnlyTheAtomicVariantsAreBoundedAndTheirBoundsAreConsistent) {
  const double launch_ns = std::chrono::nanoseconds(kLaunchTarget).count();
  const double budget_ns = std::chrono::nanoseconds(kRequestBudget).count();
  int bounded = 0;
  for (const KernelInfo& kernel : AllKernels()) {
    const bool atomic =
        kernel.id == KernelId::kAtomicGlobal || kernel.id == KernelId::kAtomicShared;
    for (Op op : kernel.ops) {
      SCOPED_TRACE(absl::StrCat(kernel.name, " op ", static_cast<int>(op)));
      const WorkBound bound = GetWorkBound(kernel.id, op);
      if (!atomic) {
        EXPECT_EQ(bound.ns_per_element, 0);
        EXPECT_EQ(bound.max_elements, 0u);
        EXPECT_EQ(bound.elements_per_launch, 0u);
        continue;
      }
      if (bound.ns_per_element == 0) continue;  // e.g. atomic_shared SUM: fast
      ++bounded;
      EXPECT_GE(bound.elements_per_launch, 32u);
      EXPECT_EQ(bound.elements_per_launch % 32, 0u) << "whole warps";
      EXPECT_LE(bound.elements_per_launch * bound.ns_per_element,
                launch_ns + 32 * bound.ns_per_element);
      EXPECT_LE(bound.max_elements * bound.ns_per_element, budget_ns);
      EXPECT_GE(bound.max_elements, bound.elements_per_launch);
      EXPECT_FALSE(std::string(bound.why).empty());
    }
  }
  // atomic_global: every op it has; atomic_shared: PROD.
  EXPECT_GE(bounded, 7);
  EXPECT_GT(GetWorkBound(KernelId::kAtomicGlobal, Op::kProd).ns_per_element,
            GetWorkBound(KernelId::kAtomicGlobal, Op::kSum).ns_per_element);
}

TEST(WorkBoundTest, CheckNamesTheLimitAndTheWayOut) {
  const uint64_t max = GetWorkBound(KernelId::kAtomicGlobal, Op::kProd).max_elements;
  ASSERT_GT(max, 0u);
  EXPECT_TRUE(CheckWorkBound(KernelId::kAtomicGlobal, Op::kProd, 0).ok());
  EXPECT_TRUE(CheckWorkBound(KernelId::kAtomicGlobal, Op::kProd, max).ok());
  const absl::Status refused = CheckWorkBound(KernelId::kAtomicGlobal, Op::kProd, max + 1);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  for (const std::string& part :
       {std::string("atomic_global"), std::string("prod"), absl::StrCat("at most ", max),
        absl::StrCat("(", max + 1, " here)"), std::string("compare-and-swap"),
        std::string("kernel auto")}) {
    EXPECT_NE(refused.message().find(part), std::string::npos) << part << ": " << refused;
  }
  // Unbounded kernels take anything.
  EXPECT_TRUE(CheckWorkBound(KernelId::kSinglePass, Op::kProd, uint64_t{1} << 40).ok());
  EXPECT_TRUE(CheckWorkBound(KernelId::kCpu, Op::kArgMax, uint64_t{1} << 40).ok());
}

}  // namespace
}  // namespace gpureduce::kernels
