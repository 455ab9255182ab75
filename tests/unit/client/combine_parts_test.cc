// CombineParts (client/parallel_streams.h) against an independent float64 reference: the answers
// of a reduction's parts, each what a server answers for its slice, must combine into the answer
// for the whole array, for every op, any cut, ties and NaNs.

#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/parallel_streams.h"
#include "common/reduction/op_name.h"
#include "gtest/gtest.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"
#include "wire/op_mapping.h"

namespace gpureduce::client {
namespace {

using testing::CheckAgainstReference;
using testing::ComputeReference;
using testing::Reference;

// What a server answers for one part: the reference over the part's slice, with MEAN asked as
// SUM (as ReduceInParts asks it) and the index counted from the part's start.
v1::ReduceResponse ServerAnswer(Op op, std::span<const float> slice) {
  const Reference ref = ComputeReference(op == Op::kMean ? Op::kSum : op, slice);
  v1::ReduceResponse answer;
  answer.set_value(static_cast<double>(ref.value));
  answer.set_index(ref.index);
  answer.set_count(slice.size());
  return answer;
}

// Cuts `data` at `sizes`, answers each part, combines, and checks against the whole's reference.
std::string CombineAndCheck(Op op, const std::vector<float>& data,
                            const std::vector<uint64_t>& sizes) {
  std::vector<uint64_t> begins;
  std::vector<v1::ReduceResponse> answers;
  uint64_t begin = 0;
  for (uint64_t size : sizes) {
    begins.push_back(begin);
    answers.push_back(ServerAnswer(op, std::span<const float>(data).subspan(begin, size)));
    begin += size;
  }
  const v1::ReduceResponse got = CombineParts(wire::ToProto(op), begins, answers);
  if (got.count() != data.size()) return absl::StrCat("count ", got.count());
  if (got.streams() != sizes.size()) return absl::StrCat("streams ", got.streams());
  return CheckAgainstReference(op, ComputeReference(op, data), got.value(), got.index(), 1e-12);
}

std::vector<uint64_t> Sizes(const std::vector<std::pair<uint64_t, uint64_t>>& parts) {
  std::vector<uint64_t> sizes;
  for (const auto& [begin, size] : parts) sizes.push_back(size);
  return sizes;
}

TEST(CombinePartsReferenceTest, EveryOpOverEvenAndAwkwardCutsMatchesTheWhole) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  const std::vector<float> mixed = testing::MixedSignData(100003, seed);
  const std::vector<float> near_one = testing::NearOneData(100003, seed + 1);
  const std::vector<std::vector<uint64_t>> cuts = {Sizes(SplitIntoParts(mixed.size(), 1)),
                                                   Sizes(SplitIntoParts(mixed.size(), 3)),
                                                   Sizes(SplitIntoParts(mixed.size(), 64)),
                                                   {1, 100001, 1},
                                                   {99999, 1, 1, 1, 1},
                                                   {7, 65536, 34459, 1}};
  for (Op op : kClassicOps) {
    const std::vector<float>& data = op == Op::kProd ? near_one : mixed;
    for (const std::vector<uint64_t>& sizes : cuts) {
      EXPECT_EQ(CombineAndCheck(op, data, sizes), "")
          << OpName(op) << " in " << sizes.size() << " parts, the first of " << sizes.front();
    }
  }
}

TEST(CombinePartsReferenceTest, ArgExtremesKeepTheFirstOccurrenceAcrossParts) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  // Few distinct values: the extremes occur many times, in several parts.
  std::vector<float> data = testing::MixedSignData(30011, seed);
  for (float& x : data) x = std::round(x) / 256.0f;
  for (Op op : {Op::kArgMin, Op::kArgMax, Op::kMin, Op::kMax}) {
    for (uint32_t parts : {2u, 5u, 17u}) {
      EXPECT_EQ(CombineAndCheck(op, data, Sizes(SplitIntoParts(data.size(), parts))), "")
          << OpName(op) << " in " << parts << " parts";
    }
  }
  // The extreme exactly at a part's start and again in the next part: the earlier one wins.
  std::vector<float> ties(10, 1.0f);
  ties[4] = ties[7] = -5.0f;
  ties[5] = ties[8] = 9.0f;
  const std::vector<uint64_t> cut = {4, 3, 3};  // parts begin at 0, 4 and 7
  EXPECT_EQ(CombineAndCheck(Op::kArgMin, ties, cut), "");
  EXPECT_EQ(CombineAndCheck(Op::kArgMax, ties, cut), "");
}

TEST(CombinePartsReferenceTest, NanPropagatesAndTheFirstNanIsTheArgExtreme) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> data = testing::MixedSignData(20011, seed);
  data[17000] = nan;  // in the last of four parts
  data[12000] = nan;  // in the third: the first NaN
  const std::vector<uint64_t> sizes = Sizes(SplitIntoParts(data.size(), 4));
  for (Op op : kClassicOps) {
    EXPECT_EQ(CombineAndCheck(op, data, sizes), "") << OpName(op);
  }
  const v1::ReduceResponse argmax =
      CombineParts(v1::ARGMAX, {0, 5003, 10006, 15009},
                   {ServerAnswer(Op::kArgMax, std::span<const float>(data).subspan(0, 5003)),
                    ServerAnswer(Op::kArgMax, std::span<const float>(data).subspan(5003, 5003)),
                    ServerAnswer(Op::kArgMax, std::span<const float>(data).subspan(10006, 5003)),
                    ServerAnswer(Op::kArgMax, std::span<const float>(data).subspan(15009, 5002))});
  EXPECT_EQ(argmax.index(), 12000);
  EXPECT_TRUE(std::isnan(argmax.value()));
}

// A server with typed results answers each part with one; the combined response carries the
// whole's, not the first part's: float32 rounded once from the combined float64, an arg op's
// index counted from the array's start.
TEST(CombinePartsTest, TypedResultsDescribeTheWholeArray) {
  for (const v1::Op op : {v1::SUM, v1::MEAN, v1::ARGMAX}) {
    std::vector<v1::ReduceResponse> answers(2);
    for (int i = 0; i < 2; ++i) {
      answers[i].set_value(i == 0 ? 0.1 : 0.25);
      answers[i].set_index(op == v1::ARGMAX ? 1 : -1);
      answers[i].set_count(4);
      v1::OpResult* typed = answers[i].add_results();
      typed->set_op(op == v1::MEAN ? v1::SUM : op);
      typed->set_value(99);
    }
    const v1::ReduceResponse got = CombineParts(op, {0, 4}, answers);
    ASSERT_EQ(got.results_size(), 1) << v1::Op_Name(op);
    const v1::OpResult& result = got.results(0);
    EXPECT_EQ(result.op(), op);
    if (op == v1::ARGMAX) {
      EXPECT_EQ(result.dtype(), v1::INT64);
      EXPECT_EQ(result.index(), 5);
      EXPECT_EQ(result.int_value(), 5);
      EXPECT_EQ(result.value(), 0.25);
    } else {
      EXPECT_EQ(result.dtype(), v1::FLOAT32);
      EXPECT_EQ(result.index(), -1);
      const double whole = op == v1::SUM ? 0.35 : 0.35 / 8;
      EXPECT_EQ(result.value(), static_cast<double>(static_cast<float>(whole)));
    }
  }
  // From a server older than typed results: none.
  std::vector<v1::ReduceResponse> old(1);
  old[0].set_count(1);
  EXPECT_EQ(CombineParts(v1::SUM, {0}, old).results_size(), 0);
}

}  // namespace
}  // namespace gpureduce::client
