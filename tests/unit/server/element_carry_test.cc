#include "server/element_carry.h"

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/support/random_data.h"

namespace gpureduce::server {
namespace {

using runtime::PayloadPieces;

std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(rng());
  return out;
}

// `bytes` as one chunk made of pieces of `piece` bytes each (gRPC's slices).
PayloadPieces ChunkOf(const std::string& bytes, size_t piece) {
  PayloadPieces chunk;
  chunk.set_element_bytes(1);
  for (size_t at = 0; at < bytes.size(); at += piece) {
    chunk.Append(reinterpret_cast<const std::byte*>(bytes.data()) + at,
                 std::min(piece, bytes.size() - at));
  }
  return chunk;
}

std::string Flatten(const PayloadPieces& pieces) {
  std::string out;
  for (size_t i = 0; i < pieces.pieces(); ++i) {
    const std::span<const std::byte> p = pieces.Piece(i);
    out.append(reinterpret_cast<const char*>(p.data()), p.size());
  }
  EXPECT_EQ(out.size(), pieces.bytes());
  return out;
}

// Feeds `parts` (each cut into pieces of `piece` bytes) through one carry, alternating its head
// buffers, and checks that every result is whole elements, that the results together are the
// input's bytes, and that each result is still intact after the next Take (two in flight).
void ExpectCarried(size_t element, const std::vector<std::string>& parts, size_t piece,
                   const std::string& what) {
  SCOPED_TRACE(absl::StrCat(what, ", element ", element, " bytes, pieces of ", piece));
  ElementCarry carry;
  carry.set_element_bytes(element);
  std::string all, out;
  PayloadPieces previous;
  std::string previous_bytes;
  for (size_t k = 0; k < parts.size(); ++k) {
    all += parts[k];
    const PayloadPieces result = carry.Take(ChunkOf(parts[k], piece), static_cast<int>(k % 2));
    EXPECT_EQ(result.element_bytes(), element);
    EXPECT_EQ(result.bytes() % element, 0u) << "part " << k;
    // The previous result (the other head buffer) was not touched by this Take.
    EXPECT_EQ(Flatten(previous), previous_bytes) << "part " << k - 1 << " after part " << k;
    const std::string flat = Flatten(result);
    out += flat;
    EXPECT_EQ(carry.held(), all.size() - out.size()) << "part " << k;
    EXPECT_LT(carry.held(), element);
    previous = result;
    previous_bytes = flat;
  }
  const size_t whole = all.size() / element * element;
  EXPECT_EQ(out, all.substr(0, whole));
  EXPECT_EQ(carry.held(), all.size() - whole);
}

TEST(ElementCarryTest, EveryElementSizeAndEveryCutOfTwoChunks) {
  const std::string bytes = RandomBytes(64, testing::FreshSeed());
  for (size_t element : {1, 2, 4, 8}) {
    for (size_t cut = 0; cut <= bytes.size(); ++cut) {
      for (size_t piece : {size_t{1}, size_t{3}, size_t{64}}) {
        ExpectCarried(element, {bytes.substr(0, cut), bytes.substr(cut)}, piece,
                      absl::StrCat("cut at ", cut));
      }
    }
  }
}

TEST(ElementCarryTest, EveryPairOfCutsOfThreeChunks) {
  const std::string bytes = RandomBytes(40, testing::FreshSeed());
  for (size_t element : {2, 4, 8}) {
    for (size_t a = 0; a <= bytes.size(); ++a) {
      for (size_t b = a; b <= bytes.size(); ++b) {
        ExpectCarried(element, {bytes.substr(0, a), bytes.substr(a, b - a), bytes.substr(b)}, 5,
                      absl::StrCat("cuts at ", a, " and ", b));
      }
    }
  }
}

TEST(ElementCarryTest, ChunksSmallerThanTheMissingBytes) {
  const std::string bytes = RandomBytes(8 * 9, testing::FreshSeed());
  for (size_t element : {2, 4, 8}) {
    for (size_t size : {1, 2, 3, 5, 7}) {
      std::vector<std::string> parts;
      for (size_t at = 0; at < bytes.size(); at += size) parts.push_back(bytes.substr(at, size));
      ExpectCarried(element, parts, 1, absl::StrCat("chunks of ", size));
    }
    // One byte, then nothing, then the rest: empty chunks change nothing.
    ExpectCarried(element, {bytes.substr(0, 1), "", "", bytes.substr(1)}, 2, "empty chunks");
  }
  // A float64 cut after 1 byte, then 3, then 7 (completes it and 6 of the next), then 5.
  ElementCarry carry;
  carry.set_element_bytes(8);
  std::vector<std::string> parts = {bytes.substr(0, 1), bytes.substr(1, 3), bytes.substr(4, 7),
                                    bytes.substr(11, 5)};
  EXPECT_EQ(carry.Take(ChunkOf(parts[0], 1), 0).bytes(), 0u);
  EXPECT_EQ(carry.held(), 1u);
  EXPECT_EQ(carry.Take(ChunkOf(parts[1], 1), 1).bytes(), 0u);
  EXPECT_EQ(carry.held(), 4u);
  const PayloadPieces third = carry.Take(ChunkOf(parts[2], 2), 0);
  EXPECT_EQ(Flatten(third), bytes.substr(0, 8));
  EXPECT_EQ(carry.held(), 3u);
  const PayloadPieces fourth = carry.Take(ChunkOf(parts[3], 7), 1);
  EXPECT_EQ(Flatten(fourth), bytes.substr(8, 8));
  EXPECT_EQ(Flatten(third), bytes.substr(0, 8));  // the other head buffer, intact
  EXPECT_EQ(carry.held(), 0u);
}

TEST(ElementCarryTest, WholeElementsStayWhereTheyWereReceived) {
  const std::string head = RandomBytes(3, 1), body = RandomBytes(8 * 1000 + 5, 2);
  ElementCarry carry;
  carry.set_element_bytes(8);
  carry.Take(ChunkOf(head, 3), 0);
  const PayloadPieces result = carry.Take(ChunkOf(body, body.size()), 1);
  ASSERT_EQ(result.count(), 1001u);  // 3 + 8005 bytes
  ASSERT_EQ(result.pieces(), 2u);    // the straddling element's head, then the chunk in place
  EXPECT_EQ(result.Piece(0).size(), 8u);
  EXPECT_EQ(reinterpret_cast<const char*>(result.Piece(1).data()), body.data() + 5);
  EXPECT_EQ(carry.held(), 0u);
}

TEST(ElementCarryTest, ManyRandomStreams) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  std::mt19937_64 rng(seed);
  for (int stream = 0; stream < 200; ++stream) {
    const size_t element = size_t{1} << (1 + rng() % 3);
    const std::string bytes = RandomBytes(rng() % 300, rng());
    std::vector<std::string> parts;
    for (size_t at = 0; at < bytes.size();) {
      const size_t take = std::min<size_t>(rng() % 20, bytes.size() - at);
      parts.push_back(bytes.substr(at, take));
      at += take;
    }
    ExpectCarried(element, parts, 1 + rng() % 6, absl::StrCat("stream ", stream));
  }
}

}  // namespace
}  // namespace gpureduce::server
