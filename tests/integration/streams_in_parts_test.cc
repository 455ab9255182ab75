// A reduction sent as several streams at once (ReducerClient parts and `gpureduce reduce
// --streams N`) against the real server: every op at sizes that do not split evenly, NaN and
// ties on the boundaries between parts, checked against the independent reference and against
// the same array sent as one stream.

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "client/parallel_streams.h"
#include "gtest/gtest.h"
#include "tests/integration/server_process.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"
#include "tests/support/wire.h"

namespace gpureduce::testing {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

class StreamsInPartsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { shared_.Start({}); }
  static void TearDownTestSuite() { shared_.Stop(); }
  void SetUp() override { REQUIRE_SHARED_SERVER(shared_); }

  // `data` in `streams` parts, each on a connection of its own, chunks of `chunk` floats; the
  // input of part `broken` (if any) fails after its first chunk.
  absl::StatusOr<v1::ReduceResponse> InParts(v1::Op op, const std::vector<float>& data,
                                             uint32_t streams, size_t chunk = 4096,
                                             int broken = -1) {
    std::vector<std::unique_ptr<client::ReducerClient>> connections;
    std::vector<client::ReducerClient*> clients;
    std::vector<client::StreamPart> parts;
    for (const auto& [begin, count] : client::SplitIntoParts(data.size(), streams)) {
      auto sent = std::make_shared<size_t>(0);
      const bool fails = int(parts.size()) == broken;
      parts.push_back({begin, count,
                       [&data, begin = begin, count = count, sent,
                        fails](absl::Span<float> out) -> absl::StatusOr<size_t> {
                         if (fails && *sent > 0) return absl::DataLossError("disk on fire");
                         const size_t n = std::min<size_t>(out.size(), count - *sent);
                         std::copy_n(data.begin() + begin + *sent, n, out.begin());
                         *sent += n;
                         return n;
                       }});
      connections.push_back(client::ReducerClient::Connect(shared_.get()->target(), true));
      clients.push_back(connections.back().get());
    }
    client::StreamOptions options;
    options.chunk_elements = chunk;
    return client::ReduceInParts(clients, Spec(op, "", 0, data.size()), std::move(parts), options);
  }

  static SharedServer shared_;
};

SharedServer StreamsInPartsTest::shared_;

gpureduce::Op DomainOp(v1::Op op) { return static_cast<gpureduce::Op>(op); }

TEST_F(StreamsInPartsTest, EveryOpMatchesOneStreamAndTheReference) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  for (size_t n : {size_t{2}, size_t{31}, size_t{1000003}}) {
    for (v1::Op op :
         {v1::SUM, v1::PROD, v1::MIN, v1::MAX, v1::MEAN, v1::SUM_SQUARES, v1::ARGMIN, v1::ARGMAX}) {
      const std::vector<float> data =
          op == v1::PROD ? NearOneData(n, seed + n) : MixedSignData(n, seed + n);
      for (uint32_t streams : {3u, 8u}) {
        absl::StatusOr<v1::ReduceResponse> parts = InParts(op, data, streams);
        ASSERT_TRUE(parts.ok()) << parts.status();
        EXPECT_EQ(parts->streams(), std::min<size_t>(streams, n));
        EXPECT_EQ(parts->count(), n);
        EXPECT_EQ(CheckAgainstReference(DomainOp(op), ComputeReference(DomainOp(op), data),
                                        parts->value(), parts->index(), 1e-9),
                  "")
            << v1::Op_Name(op) << " n=" << n << " streams=" << streams;
        absl::StatusOr<v1::ReduceResponse> one =
            StreamFloats(*shared_.get()->Connect(), Spec(op), data, 4096);
        ASSERT_TRUE(one.ok()) << one.status();
        EXPECT_EQ(parts->index(), one->index());
        if (op == v1::MIN || op == v1::MAX || op == v1::ARGMIN || op == v1::ARGMAX) {
          EXPECT_EQ(parts->value(), one->value()) << v1::Op_Name(op);
        }
      }
    }
  }
}

TEST_F(StreamsInPartsTest, TiesAndNansOnThePartBoundariesResolveToTheFirst) {
  // 10 elements in 3 parts: [0, 4), [4, 7), [7, 10).
  std::vector<float> ties = {5, 6, 7, -3, -3, 9, 9, 9, -3, 1};
  absl::StatusOr<v1::ReduceResponse> argmin = InParts(v1::ARGMIN, ties, 3);
  ASSERT_TRUE(argmin.ok()) << argmin.status();
  EXPECT_EQ(argmin->index(), 3) << "the tie at 3, 4 and 8 goes to the first";
  absl::StatusOr<v1::ReduceResponse> argmax = InParts(v1::ARGMAX, ties, 3);
  ASSERT_TRUE(argmax.ok()) << argmax.status();
  EXPECT_EQ(argmax->index(), 5);

  std::vector<float> nans = {1, 2, 3, 4, 5, 6, kNaN, kNaN, 9, 10};
  for (v1::Op op : {v1::ARGMIN, v1::ARGMAX}) {
    absl::StatusOr<v1::ReduceResponse> first_nan = InParts(op, nans, 3);
    ASSERT_TRUE(first_nan.ok()) << first_nan.status();
    EXPECT_EQ(first_nan->index(), 6) << "the first NaN, the last element of part 2";
    EXPECT_TRUE(std::isnan(first_nan->value()));
  }
  for (v1::Op op : {v1::MIN, v1::MAX, v1::SUM}) {
    absl::StatusOr<v1::ReduceResponse> nan = InParts(op, nans, 3);
    ASSERT_TRUE(nan.ok()) << nan.status();
    EXPECT_TRUE(std::isnan(nan->value())) << v1::Op_Name(op);
  }
}

TEST_F(StreamsInPartsTest, MeanIsOverTheTotalCount) {
  // Parts of 4, 3 and 3: a mean of the parts' means would be (2.5 + 6 + 9) / 3 = 5.8333.
  const std::vector<float> data = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  absl::StatusOr<v1::ReduceResponse> mean = InParts(v1::MEAN, data, 3);
  ASSERT_TRUE(mean.ok()) << mean.status();
  EXPECT_EQ(mean->value(), 5.5);
}

TEST_F(StreamsInPartsTest, AFailingPartFailsTheWholeAndIsNamed) {
  const std::vector<float> data = MixedSignData(100000, FreshSeed());
  absl::StatusOr<v1::ReduceResponse> result = InParts(v1::SUM, data, 3, 1024, /*broken=*/1);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDataLoss) << result.status();
  EXPECT_NE(result.status().message().find("stream 2 of 3"), std::string::npos) << result.status();
  EXPECT_NE(result.status().message().find("disk on fire"), std::string::npos);
}

}  // namespace
}  // namespace gpureduce::testing
