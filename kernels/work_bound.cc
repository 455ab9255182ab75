#include "kernels/work_bound.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/reduction/op_name.h"
#include "kernels/kernel_registry.h"

namespace gpureduce::kernels {
namespace {

constexpr const char* kGlobalAdd = "every element is one atomicAdd on the same global address";
constexpr const char* kGlobalCas =
    "every element is a compare-and-swap loop on the same global address, and these serialize";
constexpr const char* kSharedCas =
    "every element is a compare-and-swap loop on its block's shared value, and every block's "
    "result one on the same global address";

// Nanoseconds per element, worst case over block sizes and data, in launches of
// elements_per_launch, on the H100 (tests/gpu/ladder_test.cc, 2026-11-25), with a margin of
// about 2.5. Contention, and with it the cost per element, grows with the elements a launch has in
// flight: atomic_global PROD cost 0.32 us per element in launches of 160, 3 us in one launch of
// 33333 and 40 us in one of a million, so short launches are also what keeps the CAS variants
// usable. Only the atomic variants need a bound: the tree variants and the
// production kernels reduce a 4 MiB staging piece in well under a millisecond (0.05 ms measured).
double CostNs(KernelId kernel, Op op, const char** why) {
  const bool cas = op == Op::kProd || op == Op::kMin || op == Op::kMax;
  if (kernel == KernelId::kAtomicGlobal) {
    *why = cas ? kGlobalCas : kGlobalAdd;
    // PROD: 0.32 us measured at 160 elements a launch, about 0.75 us expected at these 5000.
    // MIN/MAX: 1.3 ns measured on sorted input (every element improves the extreme); the sums
    // 1.77 ns.
    return op == Op::kProd ? 2000 : 4;
  }
  if (kernel == KernelId::kAtomicShared && op == Op::kProd) {
    *why = kSharedCas;
    // 13 ns measured at 50,000 elements a launch on the H100, 45 ns at 250,000 on an H200, 69 ns
    // in one launch of 10 million on the H100.
    return 100;
  }
  return 0;
}

}  // namespace

WorkBound GetWorkBound(KernelId kernel, Op op) {
  WorkBound bound;
  bound.ns_per_element = CostNs(kernel, op, &bound.why);
  if (bound.ns_per_element == 0) return bound;
  const double launch_ns = std::chrono::nanoseconds(kLaunchTarget).count();
  const double budget_ns = std::chrono::nanoseconds(kRequestBudget).count();
  // Whole warps per launch at least; a launch of one element would still be bounded, but slow.
  bound.elements_per_launch =
      std::max<uint64_t>(32, static_cast<uint64_t>(launch_ns / bound.ns_per_element) / 32 * 32);
  bound.max_elements = static_cast<uint64_t>(budget_ns / bound.ns_per_element);
  return bound;
}

absl::Status CheckWorkBound(KernelId kernel, Op op, uint64_t elements) {
  const WorkBound bound = GetWorkBound(kernel, op);
  if (bound.max_elements == 0 || elements <= bound.max_elements) return absl::OkStatus();
  const std::chrono::duration<double> budget = kRequestBudget;
  return absl::InvalidArgumentError(absl::StrFormat(
      "kernel %s takes at most %d elements for %s (%d here): %s, about %s per element on an "
      "H100, and one request may hold the GPU for at most %.0f s; use kernel auto, single_pass "
      "or cub, or reduce the array in parts",
      GetKernel(kernel).name, bound.max_elements, OpName(op), elements, bound.why,
      bound.ns_per_element >= 1000 ? absl::StrCat(bound.ns_per_element / 1000, " us")
                                   : absl::StrCat(bound.ns_per_element, " ns"),
      budget.count()));
}

}  // namespace gpureduce::kernels
