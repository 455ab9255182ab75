#include "runtime/payload_pieces.h"

#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/random_data.h"

namespace gpureduce::runtime {
namespace {

// `data`'s bytes cut at random places (a float may straddle a cut), each piece at an address
// 0-3 bytes off float alignment, as gRPC's slices lie.
struct Scattered {
  std::vector<std::string> storage;
  PayloadPieces pieces;
};

Scattered Scatter(const std::vector<float>& data, uint64_t seed) {
  Scattered out;
  std::mt19937_64 random(seed);
  const auto* bytes = reinterpret_cast<const char*>(data.data());
  const size_t total = data.size() * sizeof(float);
  std::vector<std::pair<size_t, size_t>> cuts;  // (skew, length) of each piece
  for (size_t at = 0; at < total;) {
    const size_t take = std::min<size_t>(total - at, 1 + random() % 9000);
    const size_t skew = random() % 4;
    out.storage.push_back(std::string(skew, 'x') + std::string(bytes + at, take));
    cuts.emplace_back(skew, take);
    at += take;
  }
  for (size_t i = 0; i < cuts.size(); ++i) {
    out.pieces.Append(reinterpret_cast<const std::byte*>(out.storage[i].data() + cuts[i].first),
                      cuts[i].second);
  }
  return out;
}

TEST(PayloadPiecesTest, CopiesAnyRangeAcrossUnalignedPieces) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  const std::vector<float> data = testing::MixedSignData(100003, seed);
  const Scattered scattered = Scatter(data, seed);
  ASSERT_GT(scattered.pieces.pieces(), 10u);
  EXPECT_EQ(scattered.pieces.count(), data.size());
  EXPECT_FALSE(scattered.pieces.AsSpan().has_value());
  std::mt19937_64 random(seed + 1);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t first = random() % data.size();
    const size_t count = 1 + random() % (data.size() - first);
    std::vector<float> out(count);
    scattered.pieces.CopyFloats(first, count, out.data());
    ASSERT_EQ(std::memcmp(out.data(), data.data() + first, count * sizeof(float)), 0)
        << "floats " << first << " to " << first + count;
  }
  std::vector<float> all(data.size());
  scattered.pieces.CopyFloats(0, data.size(), all.data());
  EXPECT_EQ(all, data);
  // A sub-range as pieces of its own holds the same floats.
  for (int trial = 0; trial < 50; ++trial) {
    const size_t first = random() % data.size();
    const size_t count = random() % (data.size() - first + 1);
    const PayloadPieces range = scattered.pieces.Elements(first, count);
    ASSERT_EQ(range.count(), count);
    std::vector<float> out(count);
    if (count > 0) range.CopyFloats(0, count, out.data());
    ASSERT_EQ(std::memcmp(out.data(), data.data() + first, count * sizeof(float)), 0);
  }
}

TEST(PayloadPiecesTest, OneAlignedPieceIsUsedInPlace) {
  const std::vector<float> data = testing::MixedSignData(31, testing::FreshSeed());
  const PayloadPieces pieces{std::span<const float>(data)};
  ASSERT_TRUE(pieces.AsSpan().has_value());
  EXPECT_EQ(pieces.AsSpan()->data(), data.data());
  EXPECT_EQ(pieces.AsSpan()->size(), 31u);
  EXPECT_TRUE(PayloadPieces().AsSpan().has_value());
  EXPECT_TRUE(PayloadPieces().empty());
}

}  // namespace
}  // namespace gpureduce::runtime
