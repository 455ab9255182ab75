#pragma once

// The short runs pass's answers (answer_runs) checked against EncodeAnswers's over the Stats
// add_runs gives the same runs: runs_answers_test and run_products_answers_test.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/reduction/dtype.h"
#include "common/reduction/op.h"
#include "kernels/cpu/block_reduce.h"
#include "tests/unit/kernels/typed_array.h"

namespace gpureduce::kernels::cpu {

// As runs_pass_test: calls of 50 runs, eight at a time and six.
inline constexpr size_t kRunsACall = 50;

// What `passes` answers for `ops` over the runs, against EncodeAnswers's bytes from the Stats
// add_runs gives them, calls of kRunsACall runs (their answers at their own outputs: answer_runs's
// `first`); how many it answers too, and the answers that left int64 it counted (`counters`: each
// op has a counter; without, none has and such answers are left to the Stats). The differences,
// one a line.
std::string AnswersDiffer(const Passes& passes, bool vectors, bool keys, DType dtype,
                          const std::vector<Op>& ops, double ddof, const testing::TypedArray& data,
                          const std::vector<uint64_t>& bounds, bool counters = true);

}  // namespace gpureduce::kernels::cpu
