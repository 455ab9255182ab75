#pragma once

// An array request's answers (issue 23): for each op, one element of its result dtype per output,
// finalized from the output's merged Stats as a full reduction's answer is (FinalizeOp; many at
// once through EncodeAnswers).

#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/reduction/op_result.h"
#include "common/reduction/reduce_layout.h"
#include "kernels/reduce.h"
#include "runtime/backend.h"

namespace gpureduce::runtime {

class ArrayResults {
 public:
  ArrayResults(const ReduceLayout& layout, std::span<const gpureduce::Op> ops,
               gpureduce::DType dtype, double ddof);

  // The answers of outputs first .. first + stats.size() - 1 from their Stats. The first output
  // an op cannot answer (all NaN under NANARGMIN), by its place whatever the order of the writes,
  // becomes status(), naming the output. Thread-safe for distinct outputs.
  void Write(uint64_t first, std::span<const gpureduce::Stats> stats);

  // Where the kernels may write outputs first.. straight, every op's (no Stats, no Write): a
  // request of many outputs (one output's answer also goes in `value`, which Write sets); none
  // (empty) otherwise.
  kernels::cpu::DirectAnswers Direct(uint64_t first);

  // Once every Write has returned.
  absl::Status status() const;
  // The arrays, once every output is written.
  std::vector<ArrayResult> Take();

 private:
  std::string OutputName(uint64_t output) const;

  const ReduceLayout& layout_;
  const gpureduce::DType dtype_;
  const double ddof_;
  std::vector<ArrayResult> arrays_;
  std::vector<std::atomic<uint64_t>> overflows_;  // per array: outputs that wrapped
  // The first output refused so far; none: the most.
  std::atomic<uint64_t> first_refused_{std::numeric_limits<uint64_t>::max()};
  mutable std::mutex mu_;
  absl::Status status_;  // under mu_
};

}  // namespace gpureduce::runtime
