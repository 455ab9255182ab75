#include "client/chunk_pipeline.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
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

// A caller that stops after one message destroys the pipeline while the helper is reading the
// next: the destructor waits for that read, and the helper reads nothing more.
TEST(ChunkPipelineTest, StoppingEarlyWaitsForTheReadInProgressAndReadsNoFurther) {
  std::atomic<int> reads{0};
  std::atomic<bool> reading{false};
  std::promise<void> second_read_started;
  std::promise<void> second_read_may_end;
  const std::shared_future<void> may_end = second_read_may_end.get_future().share();
  auto endless = [&](absl::Span<float> out) -> absl::StatusOr<size_t> {
    reading = true;
    if (++reads == 2) {
      second_read_started.set_value();
      may_end.wait_for(std::chrono::seconds(30));  // bounded: a failed test must not hang
    }
    std::fill(out.begin(), out.end(), 0.5f);
    reading = false;
    return out.size();
  };
  auto pipeline =
      std::make_unique<ChunkPipeline>(endless, SumSpec(), 1024, /*use_values_field=*/false);
  absl::StatusOr<const v1::ReduceChunk*> first = pipeline->Next();
  ASSERT_TRUE(first.ok() && *first != nullptr);
  EXPECT_EQ(pipeline->Count(*first), 1024u);
  ASSERT_EQ(second_read_started.get_future().wait_for(std::chrono::seconds(30)),
            std::future_status::ready);
  std::future<void> destroyed = std::async(std::launch::async, [&] { pipeline.reset(); });
  // One-sided: a destructor that returned during the read (a detached helper) shows here; a slow
  // machine can only make this wait longer.
  EXPECT_EQ(destroyed.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout)
      << "the destructor returned while the helper was still reading";
  second_read_may_end.set_value();
  ASSERT_EQ(destroyed.wait_for(std::chrono::seconds(30)), std::future_status::ready)
      << "the destructor did not join the helper";
  EXPECT_FALSE(reading) << "a read ran on after the pipeline was destroyed";
  EXPECT_EQ(reads, 2) << "the helper read past the two messages it may hold";
}

}  // namespace
}  // namespace gpureduce::client
