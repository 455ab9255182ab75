#include "tests/unit/kernels/answers_differ.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <span>

#include "absl/strings/str_cat.h"
#include "common/reduction/answer_encoding.h"
#include "common/reduction/op_name.h"
#include "common/reduction/op_result.h"
#include "kernels/reduce.h"

namespace gpureduce::kernels::cpu {
namespace {

// How many of a call's `count` runs the AVX-512 copy answers (`vectors`): eight at a time up to
// the first eight that hold a refused run; by keys (`keys`), every run of the groups of 32 before
// the first that holds a NaN, then eight at a time likewise.
size_t AnsweredOf(bool vectors, bool keys, size_t count, size_t refused, size_t first_nan) {
  if (!vectors) return 0;
  if (!keys || first_nan < count) {
    const size_t from = keys ? first_nan / 32 * 32 : 0;
    return from + (refused - from) / 8 * 8;
  }
  return count;
}

// Whether the pass answers `op`'s outputs of `dtype` that left int64 itself where it has a counter
// for them (DirectAnswer::overflows): integers' PROD (int_product_answers.h), not int64's SUM.
bool CountsOverflows(Op op, DType dtype) { return IsInteger(dtype) && NanFormOf(op) == Op::kProd; }

}  // namespace

// What `passes` answers for `ops` over the runs, against EncodeAnswers's bytes from the Stats
// add_runs gives them, calls of kRunsACall runs (their answers at their own outputs: answer_runs's
// `first`); how many it answers too, and the answers that left int64 it counted (`counters`: each
// op has a counter; without, none has and such answers are left to the Stats). The differences,
// one a line.
std::string AnswersDiffer(const Passes& passes, bool vectors, bool keys, DType dtype,
                          const std::vector<Op>& ops, double ddof, const testing::TypedArray& data,
                          const std::vector<uint64_t>& bounds, bool counters) {
  const size_t runs = bounds.size() - 1;
  std::vector<std::vector<std::byte>> got(ops.size());
  std::vector<std::atomic<uint64_t>> counted(ops.size());
  std::vector<uint64_t> want_counted(ops.size());
  DirectAnswers direct;
  direct.ddof = ddof;
  for (size_t k = 0; k < ops.size(); ++k) {
    got[k].assign(runs * DTypeSize(ResultDType(ops[k], dtype)), std::byte{0xa5});
    direct.Add(ops[k], got[k].data(), counters ? &counted[k] : nullptr);
  }
  const StatsNeeds needs = NeedsOf(ops);
  std::string failures;
  for (size_t r0 = 0; r0 < runs && failures.size() < 2000; r0 += kRunsACall) {
    const size_t count = std::min(kRunsACall, runs - r0);
    const std::byte* from = data.bytes.data() + bounds[r0] * DTypeSize(dtype);
    const size_t wrote =
        passes.answer_runs(dtype, direct, r0, from, bounds.data() + r0, bounds[r0], count);
    std::vector<Stats> stats(count);
    passes.add_runs(dtype, needs, from, bounds.data() + r0, bounds[r0], count, stats.data());
    // Each run's bytes; the pass stops before eight runs one of which an op refuses, or whose
    // integer answer left int64 and is not counted (int64's SUM, and PROD without a counter: the
    // Stats count it).
    std::vector<std::vector<std::byte>> want(ops.size());
    std::vector<std::vector<uint64_t>> overflows(ops.size(), std::vector<uint64_t>(count));
    size_t refused = count;
    for (size_t k = 0; k < ops.size(); ++k) {
      const size_t size = DTypeSize(ResultDType(ops[k], dtype));
      want[k].resize(count * size);
      for (size_t r = 0; r < count; ++r) {
        const std::span<const Stats> one(&stats[r], 1);
        const EncodedAnswers answers =
            EncodeAnswers(ops[k], dtype, ddof, one, want[k].data() + r * size);
        overflows[k][r] = answers.overflows;
        if (!answers.status.ok() ||
            (answers.overflows > 0 && !(counters && CountsOverflows(ops[k], dtype)))) {
          refused = std::min(refused, r);
        }
      }
    }
    size_t first_nan = count;
    for (size_t r = 0; r < count && first_nan == count; ++r) {
      if (stats[r].nan_count > 0) first_nan = r;
    }
    if (wrote != AnsweredOf(vectors, keys, count, refused, first_nan)) {
      failures += absl::StrCat("runs from ", r0, ": ", wrote, " answered of ", refused,
                               " before a refusal (the first NaN in run ", r0 + first_nan, ")\n");
    }
    for (size_t k = 0; k < ops.size(); ++k) {
      const size_t size = DTypeSize(ResultDType(ops[k], dtype));
      for (size_t r = 0; r < wrote; ++r) want_counted[k] += overflows[k][r];
      for (size_t r = 0; r < wrote && failures.size() < 2000; ++r) {
        if (std::memcmp(got[k].data() + (r0 + r) * size, want[k].data() + r * size, size) != 0) {
          failures += absl::StrCat("run ", r0 + r, " (", bounds[r0 + r + 1] - bounds[r0 + r],
                                   " elements): its ", OpName(ops[k]),
                                   " bytes differ from EncodeAnswers's\n");
        }
      }
      // The runs it did not answer are untouched, every op's (the caller's Stats answer them).
      for (size_t r = wrote; r < count && failures.size() < 2000; ++r) {
        const std::byte* place = got[k].data() + (r0 + r) * size;
        if (std::any_of(place, place + size, [](std::byte b) { return b != std::byte{0xa5}; })) {
          failures += absl::StrCat("run ", r0 + r, ": its ", OpName(ops[k]),
                                   " answer written though the call did not answer it\n");
        }
      }
    }
  }
  for (size_t k = 0; k < ops.size(); ++k) {
    if (counted[k].load() != want_counted[k]) {
      absl::StrAppend(&failures, "its ", OpName(ops[k]), " counted ", counted[k].load(),
                      " answers that left int64 of ", want_counted[k], " answered\n");
    }
  }
  return failures;
}

}  // namespace gpureduce::kernels::cpu
