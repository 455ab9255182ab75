#include "client/chunk_pipeline.h"

#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/random_data.h"

namespace gpureduce::client {
namespace {

v1::ReduceSpec SumSpec() {
  v1::ReduceSpec spec;
  spec.set_op(v1::SUM);
  return spec;
}

TEST(ChunkPipelineTest, DeliversEveryFloatInOrderWithTheSpecOnlyFirst) {
  const std::vector<float> data = testing::MixedSignData(1000003, testing::FreshSeed());
  size_t read = 0;
  auto fill = [&](absl::Span<float> out) -> absl::StatusOr<size_t> {
    const size_t n = std::min(out.size(), data.size() - read);
    std::copy_n(data.begin() + read, n, out.begin());
    read += n;
    return n;
  };
  ChunkPipeline pipeline(fill, SumSpec(), 4099, /*use_values_field=*/false);
  std::vector<float> received;
  int messages = 0;
  while (true) {
    absl::StatusOr<const v1::ReduceChunk*> message = pipeline.Next();
    ASSERT_TRUE(message.ok()) << message.status();
    if (*message == nullptr) break;
    EXPECT_EQ((*message)->has_spec(), messages == 0) << "message " << messages;
    const std::string& bytes = (*message)->data();
    ASSERT_EQ(bytes.size(), pipeline.Count(*message) * sizeof(float));
    const size_t at = received.size();
    received.resize(at + bytes.size() / sizeof(float));
    std::memcpy(received.data() + at, bytes.data(), bytes.size());
    pipeline.Done(*message);
    ++messages;
  }
  EXPECT_EQ(messages, static_cast<int>((data.size() + 4098) / 4099));
  EXPECT_EQ(received, data);
}

TEST(ChunkPipelineTest, AnEmptyInputSendsTheSpecAlone) {
  auto fill = [](absl::Span<float>) -> absl::StatusOr<size_t> { return 0; };
  ChunkPipeline pipeline(fill, SumSpec(), 16, /*use_values_field=*/true);
  absl::StatusOr<const v1::ReduceChunk*> first = pipeline.Next();
  ASSERT_TRUE(first.ok());
  ASSERT_NE(*first, nullptr);
  EXPECT_TRUE((*first)->has_spec());
  EXPECT_EQ(pipeline.Count(*first), 0u);
  pipeline.Done(*first);
  absl::StatusOr<const v1::ReduceChunk*> end = pipeline.Next();
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(*end, nullptr);
}

TEST(ChunkPipelineTest, AnInputErrorArrivesAfterWhatWasReadBeforeIt) {
  int calls = 0;
  auto fill = [&](absl::Span<float> out) -> absl::StatusOr<size_t> {
    if (++calls == 3) return absl::DataLossError("truncated file");
    std::fill(out.begin(), out.end(), 1.5f);
    return out.size();
  };
  ChunkPipeline pipeline(fill, SumSpec(), 8, /*use_values_field=*/true);
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<const v1::ReduceChunk*> message = pipeline.Next();
    ASSERT_TRUE(message.ok() && *message != nullptr);
    EXPECT_EQ((*message)->values_size(), 8);
    pipeline.Done(*message);
  }
  EXPECT_EQ(pipeline.Next().status().code(), absl::StatusCode::kDataLoss);
}

TEST(ChunkPipelineTest, StoppingEarlyJoinsTheHelper) {
  auto endless = [](absl::Span<float> out) -> absl::StatusOr<size_t> { return out.size(); };
  ChunkPipeline pipeline(endless, SumSpec(), 1024, /*use_values_field=*/false);
  ASSERT_TRUE(pipeline.Next().ok());  // then destroyed with the helper blocked on a full queue
}

}  // namespace
}  // namespace gpureduce::client
