#pragma once

// What a kernel's work costs on the GPU, per op: the cost model that keeps every request's GPU
// work bounded. The runtime cuts a slow kernel's work into launches of about kLaunchTarget, one
// in flight, and checks for cancellation between them, so a cancelled or expired request leaves
// the GPU within a launch; a request whose work would exceed kRequestBudget is refused up front.
// The costs are worst cases (any block size, adversarial data) measured on the H100; the GPU
// suite measures them again (LadderTest.TheCostModelBoundsEveryLaunch in tests/gpu/ladder_test.cc)
// and fails when the model is too optimistic.

#include <chrono>
#include <cstdint>

#include "absl/status/status.h"
#include "common/reduction/op.h"
#include "kernels/kernel_id.h"

namespace gpureduce::kernels {

inline constexpr std::chrono::milliseconds kLaunchTarget{10};
inline constexpr std::chrono::seconds kRequestBudget{2};

struct WorkBound {
  double ns_per_element = 0;         // worst case measured; 0: bandwidth-bound (fast)
  uint64_t elements_per_launch = 0;  // at most, a staging piece may be smaller; 0: any piece
                                     // finishes well within kLaunchTarget
  uint64_t max_elements = 0;         // 0: no limit
  const char* why = "";              // what makes the kernel slow for this op
};

WorkBound GetWorkBound(KernelId kernel, Op op);

// OK when `elements` is within the kernel's maximum for `op`; else INVALID_ARGUMENT naming the
// maximum, the cost behind it and what to use instead.
absl::Status CheckWorkBound(KernelId kernel, Op op, uint64_t elements);

}  // namespace gpureduce::kernels
