// ReduceRowsAsync (kernels/reduce.h): every row of tables of every dtype against the independent
// reference over that row alone, for every op, at row lengths on both sides of the columns pass's
// longest (short rows reduced side by side, long ones each by ReduceBlock, sums alone of short
// float rows in place), with NaN, infinities and ties in rows; every row handed to the sink once.

#include <atomic>
#include <cmath>
#include <future>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/reduction/answer_encoding.h"
#include "common/reduction/op_name.h"
#include "common/reduction/op_result.h"
#include "gtest/gtest.h"
#include "kernels/cpu/block_reduce.h"
#include "kernels/reduce.h"
#include "tests/support/random_data.h"
#include "tests/unit/kernels/runs_data.h"
#include "tests/unit/kernels/stats_reference.h"
#include "tests/unit/kernels/typed_array.h"

namespace gpureduce::kernels::cpu {
namespace {

using testing::TypedArray;

TypedArray Row(const TypedArray& table, size_t length, size_t r) {
  if (IsInteger(table.dtype)) {
    return testing::FromInts(table.dtype,
                             std::span<const int64_t>(table.ints).subspan(r * length, length));
  }
  return testing::FromValues(table.dtype,
                             std::span<const double>(table.values).subspan(r * length, length));
}

class RowsReduceTest : public ::testing::TestWithParam<DType> {};

TEST_P(RowsReduceTest, EveryRowMatchesTheReference) {
  const DType dtype = GetParam();
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 random(seed);
  ThreadPool pool(3);
  const std::vector<Op> ops(std::begin(kAllOps), std::end(kAllOps));
  // Sums alone: float32, bfloat16 and float64 rows summed in place (sums_in_place.h).
  const std::vector<Op> sums = {Op::kSum, Op::kMean, Op::kNanSum, Op::kNanMean};
  for (const size_t length : {1, 3, 16, 48, 64, 128, 129, 1000}) {
    for (const std::vector<Op>& set :
         {ops, std::vector<Op>{Op::kSum, Op::kNanArgMax, Op::kVar}, sums}) {
      SCOPED_TRACE(absl::StrCat("length ", length, ", ", set.size(), " ops"));
      // More than one block of the pass's rows, and not a multiple of the rows summed at once.
      const size_t rows = length > 100 ? 301 : 701;
      TypedArray table = testing::RandomArray(dtype, rows * length, random());
      if (!IsInteger(dtype)) {
        for (size_t k = 0; k < 20; ++k) table.Set(random() % table.size(), NAN);
        table.Set(random() % table.size(), INFINITY);
        table.Set(random() % table.size(), -INFINITY);
      }
      std::vector<Stats> got(rows);
      std::vector<int> seen(rows, 0);
      std::mutex mu;
      std::promise<void> finished;
      ReduceRowsAsync(
          pool, {dtype, NeedsOf(set)}, table.bytes, length,
          [&](uint64_t first, std::span<const Stats> stats) {
            std::lock_guard<std::mutex> lock(mu);
            for (size_t i = 0; i < stats.size(); ++i) {
              got[first + i] = stats[i];
              ++seen[first + i];
            }
          },
          [&](ReduceTiming) { finished.set_value(); });
      finished.get_future().get();
      std::string failures;
      for (size_t r = 0; r < rows && failures.size() < 2000; ++r) {
        if (seen[r] != 1) failures += absl::StrCat("row ", r, " seen ", seen[r], " times\n");
        const TypedArray own = Row(table, length, r);
        for (Op op : set) {
          const std::string error = testing::CheckResult(testing::ReferenceOf(op, own, 1),
                                                         FinalizeOp(op, dtype, 1, got[r]));
          if (!error.empty())
            failures += absl::StrCat("row ", r, " ", OpName(op), ": ", error, "\n");
        }
      }
      EXPECT_EQ(failures, "");
    }
  }
}

// DirectAnswers for one op, and for the five-op request: every row's answer bytes, whether the
// short runs pass wrote them or the sink's Stats did (through EncodeAnswers, as the runtime),
// equal those of the sink alone; where the pass has vectors (the AVX-512 copy) and the ops
// answer there, rows skip the sink.
TEST_P(RowsReduceTest, DirectAnswersAreTheSinksBytes) {
  const DType dtype = GetParam();
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 random(seed);
  ThreadPool pool(3);
  std::vector<std::vector<Op>> op_sets;
  for (Op op : kAllOps) op_sets.push_back({op});
  op_sets.push_back({Op::kSum, Op::kMin, Op::kMax, Op::kMean, Op::kStd});
  for (const size_t length : {4, 16, 31, 128, 512}) {
    const size_t rows = 9000 / length + 5;  // several tasks, several blocks of the pass's rows
    TypedArray table = testing::RandomArray(dtype, rows * length, random());
    if (dtype == DType::kInt64) {  // sums that do not wrap, so that the pass answers them
      std::vector<int64_t> small(table.ints.begin(), table.ints.end());
      for (int64_t& x : small) x >>= 16;
      table = testing::FromInts(dtype, small);
    }
    if (!IsInteger(dtype)) {
      for (size_t k = 0; k < 20; ++k) table.Set(random() % table.size(), NAN);
      table.Set(random() % table.size(), INFINITY);
    }
    for (const std::vector<Op>& ops : op_sets) {
      const StatsRequest request{dtype, NeedsOf(ops)};
      SCOPED_TRACE(
          absl::StrCat("length ", length, ", ", OpName(ops[0]), " and ", ops.size() - 1, " more"));
      // Each op's answers that left int64, counted as the runtime counts them (ArrayResults):
      // the sink's through EncodeAnswers, the pass's into the op's counter.
      const auto reduce = [&](bool direct, std::vector<std::vector<std::byte>>& out,
                              std::vector<uint64_t>& overflows) {
        out.assign(ops.size(), {});
        std::vector<std::atomic<uint64_t>> counted(ops.size());
        DirectAnswers answers;
        answers.ddof = 1;
        for (size_t k = 0; k < ops.size(); ++k) {
          out[k].assign(rows * DTypeSize(ResultDType(ops[k], dtype)), std::byte{0xa5});
          answers.Add(ops[k], out[k].data(), &counted[k]);
        }
        std::atomic<size_t> sunk{0};
        std::promise<void> finished;
        ReduceRowsAsync(
            pool, request, table.bytes, length,
            [&](uint64_t first, std::span<const Stats> stats) {
              sunk += stats.size();
              for (size_t k = 0; k < ops.size(); ++k) {
                const size_t size = DTypeSize(ResultDType(ops[k], dtype));
                for (size_t i = 0; i < stats.size(); ++i) {  // one by one: a refusal stops none
                  counted[k] += EncodeAnswers(ops[k], dtype, 1, stats.subspan(i, 1),
                                              out[k].data() + (first + i) * size)
                                    .overflows;
                }
              }
            },
            [&](ReduceTiming) { finished.set_value(); }, direct ? answers : DirectAnswers{});
        finished.get_future().get();
        overflows.clear();
        for (const std::atomic<uint64_t>& count : counted) overflows.push_back(count.load());
        return sunk.load();
      };
      std::vector<std::vector<std::byte>> want, got;
      std::vector<uint64_t> want_overflows, got_overflows;
      EXPECT_EQ(reduce(false, want, want_overflows), rows);
      const size_t sunk = reduce(true, got, got_overflows);
      EXPECT_TRUE(got == want) << "the answers' bytes differ";
      EXPECT_EQ(got_overflows, want_overflows) << "the answers that left int64";
      const bool vectors = RunnablePasses().size() == 3 && RunsPassTakes(request, length) &&
                           AnsweredByVectors(dtype, ops);
      EXPECT_EQ(sunk < rows, vectors) << sunk << " rows of " << rows << " sunk";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryDType, RowsReduceTest, ::testing::ValuesIn(kAllDTypes),
                         [](const auto& info) { return std::string(DTypeName(info.param)); });

}  // namespace
}  // namespace gpureduce::kernels::cpu
