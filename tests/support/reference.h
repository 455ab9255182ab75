#pragma once

// An independent reference for every op: plain sequential loops in long double (x87 80-bit on
// x86-64), written without any code from kernels/, so a shared bug cannot hide.

#include <cstdint>
#include <span>
#include <string>

#include "common/reduction/op.h"

namespace gpureduce::testing {

struct Reference {
  long double value = 0;
  int64_t index = -1;
  // The scale an error is judged against: sum(|x|) for SUM, sum(x^2) for SUM_SQUARES,
  // mean(|x|) for MEAN, |product| for PROD, 0 (exact) for MIN/MAX/ARGMIN/ARGMAX.
  long double scale = 0;
};

// Precondition: !data.empty() unless the op is SUM or PROD.
Reference ComputeReference(gpureduce::Op op, std::span<const float> data);

// Checks `value`/`index` against the reference: NaN must match NaN, infinities must match
// exactly, exact ops must match exactly, accumulating ops within rel_tol * scale.
// Returns an empty string when it matches, else a description of the mismatch.
std::string CheckAgainstReference(gpureduce::Op op, const Reference& ref, double value,
                                  int64_t index, double rel_tol);

}  // namespace gpureduce::testing
