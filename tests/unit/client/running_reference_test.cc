// `gpureduce reduce --verify`'s running reference against the tests' independent long double
// reference, on fresh mixed-sign inputs at awkward sizes, fed in uneven chunks.

#include "client/running_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "common/reduction/op.h"
#include "gtest/gtest.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"

namespace gpureduce::client {
namespace {

using testing::CheckAgainstReference;
using testing::ComputeReference;

constexpr v1::Op kOps[] = {v1::SUM,  v1::PROD,        v1::MIN,    v1::MAX,
                           v1::MEAN, v1::SUM_SQUARES, v1::ARGMIN, v1::ARGMAX};

// Feeds `data` in chunks of 1, 7, 8, 9, 4096 and 262147 elements, round robin, so every lane
// remainder and a chunk boundary at every offset modulo 8 occur.
RunningReference FeedInChunks(v1::Op op, const std::vector<float>& data) {
  RunningReference reference(op);
  constexpr size_t kChunks[] = {1, 7, 8, 9, 4096, 262147};
  size_t at = 0;
  for (size_t turn = 0; at < data.size(); ++turn) {
    const size_t n = std::min(kChunks[turn % std::size(kChunks)], data.size() - at);
    reference.Add(absl::MakeConstSpan(data.data() + at, n));
    at += n;
  }
  return reference;
}

TEST(RunningReferenceTest, MatchesTheIndependentReferenceAtAwkwardSizes) {
  for (const size_t n : {size_t{1}, size_t{2}, size_t{31}, size_t{1000003}}) {
    for (const v1::Op op : kOps) {
      const uint64_t seed = testing::FreshSeed();
      SCOPED_TRACE(testing::SeedTrace(seed) + " n=" + std::to_string(n) + " op=" + v1::Op_Name(op));
      const std::vector<float> data =
          op == v1::PROD ? testing::NearOneData(n, seed) : testing::MixedSignData(n, seed);
      const RunningReference got = FeedInChunks(op, data);
      const testing::Reference want = ComputeReference(static_cast<gpureduce::Op>(op), data);
      const auto kernel_op = static_cast<gpureduce::Op>(op);
      // MIN and MAX keep an index too, but only ARGMIN and ARGMAX report it.
      const int64_t index = gpureduce::OpReturnsIndex(kernel_op) ? got.index() : -1;
      EXPECT_EQ(CheckAgainstReference(kernel_op, want, got.value(), index, 1e-12), "");
      if (op == v1::SUM || op == v1::SUM_SQUARES || op == v1::MEAN) {
        EXPECT_NEAR(got.scale(), static_cast<double>(want.scale), 1e-12 * want.scale);
      }
    }
  }
}

TEST(RunningReferenceTest, NaNPropagatesAndArgOpsKeepTheFirstNaN) {
  std::vector<float> data = testing::MixedSignData(1000, testing::FreshSeed());
  data[17] = std::numeric_limits<float>::quiet_NaN();
  data[600] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(FeedInChunks(v1::SUM, data).value()));
  EXPECT_TRUE(std::isnan(FeedInChunks(v1::SUM_SQUARES, data).value()));
  EXPECT_TRUE(std::isnan(FeedInChunks(v1::MIN, data).value()));
  const RunningReference argmax = FeedInChunks(v1::ARGMAX, data);
  EXPECT_TRUE(std::isnan(argmax.value()));
  EXPECT_EQ(argmax.index(), 17);
}

}  // namespace
}  // namespace gpureduce::client
