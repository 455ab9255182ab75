#pragma once

// An array request's answers (issue 23): for each op, one element of its result dtype per output,
// finalized from the output's merged Stats as a full reduction's answer is (FinalizeOp).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/reduction/op_result.h"
#include "common/reduction/reduce_layout.h"
#include "runtime/backend.h"

namespace gpureduce::runtime {

class ArrayResults {
 public:
  ArrayResults(const ReduceLayout& layout, std::span<const gpureduce::Op> ops,
               gpureduce::DType dtype, double ddof);

  // Output `output`'s answers from its Stats. The first output an op cannot answer (all NaN
  // under NANARGMIN) becomes status(), naming the output; later ones are ignored.
  void Write(uint64_t output, const gpureduce::Stats& stats);

  const absl::Status& status() const { return status_; }
  // The arrays, once every output is written.
  std::vector<ArrayResult> Take() { return std::move(arrays_); }

 private:
  std::string OutputName(uint64_t output) const;

  const ReduceLayout& layout_;
  const gpureduce::DType dtype_;
  const double ddof_;
  std::vector<ArrayResult> arrays_;
  absl::Status status_;
};

}  // namespace gpureduce::runtime
