// How the answers of a reduction's parts combine, and how an array is cut into parts, without a
// server: the combination must be what one stream would have answered.

#include "client/parallel_streams.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace gpureduce::client {
namespace {

v1::ReduceResponse Part(double value, int64_t index, uint64_t count, double server_us = 10) {
  v1::ReduceResponse part;
  part.set_value(value);
  part.set_index(index);
  part.set_count(count);
  part.set_kernel("cpu");
  part.set_backend("cpu");
  part.mutable_timing()->set_server_us(server_us);
  part.mutable_timing()->set_kernel_us(2);
  part.mutable_timing()->set_bytes(count * 4);
  part.mutable_timing()->set_chunks(1);
  return part;
}

const std::vector<uint64_t> kBegins = {0, 4, 7};  // parts of 4, 3 and 3 elements

TEST(CombinePartsTest, SumsProductsAndMeansCombineInPartOrder) {
  const std::vector<v1::ReduceResponse> parts = {Part(1.5, -1, 4), Part(-2.25, -1, 3),
                                                 Part(4, -1, 3)};
  v1::ReduceResponse sum = CombineParts(v1::SUM, kBegins, parts);
  EXPECT_EQ(sum.value(), 3.25);
  EXPECT_EQ(sum.count(), 10u);
  EXPECT_EQ(sum.index(), -1);
  EXPECT_EQ(sum.streams(), 3u);
  EXPECT_EQ(CombineParts(v1::PROD, kBegins, parts).value(), 1.5 * -2.25 * 4);
  EXPECT_EQ(CombineParts(v1::MEAN, kBegins, parts).value(), 3.25 / 10) << "sums, then one mean";
}

TEST(CombinePartsTest, ArgExtremesTakeTheFirstOccurrenceAcrossParts) {
  // Parts' indices are their own: part 2's index 1 is element 5 of the whole.
  const std::vector<v1::ReduceResponse> tie = {Part(-3, 3, 4), Part(-3, 0, 3), Part(-3, 1, 3)};
  EXPECT_EQ(CombineParts(v1::ARGMIN, kBegins, tie).index(), 3);
  const std::vector<v1::ReduceResponse> later = {Part(-1, 0, 4), Part(-3, 1, 3), Part(-3, 0, 3)};
  const v1::ReduceResponse best = CombineParts(v1::ARGMIN, kBegins, later);
  EXPECT_EQ(best.index(), 5);
  EXPECT_EQ(best.value(), -3);
  EXPECT_EQ(CombineParts(v1::ARGMAX, kBegins, later).index(), 0);
}

TEST(CombinePartsTest, TheFirstNanWinsAndNanPropagates) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<v1::ReduceResponse> parts = {Part(-9, 1, 4), Part(nan, 2, 3), Part(nan, 0, 3)};
  const v1::ReduceResponse argmin = CombineParts(v1::ARGMIN, kBegins, parts);
  EXPECT_EQ(argmin.index(), 6);
  EXPECT_TRUE(std::isnan(argmin.value()));
  EXPECT_TRUE(std::isnan(CombineParts(v1::MIN, kBegins, parts).value()));
  EXPECT_TRUE(std::isnan(CombineParts(v1::MAX, kBegins, parts).value()));
  EXPECT_EQ(
      CombineParts(v1::MIN, kBegins, {Part(-9, -1, 4), Part(2, -1, 3), Part(-10, -1, 3)}).value(),
      -10);
}

TEST(CombinePartsTest, TimingSumsTheWorkAndTakesTheLongestPart) {
  const v1::ReduceResponse all =
      CombineParts(v1::SUM, kBegins, {Part(1, -1, 4, 30), Part(1, -1, 3, 50), Part(1, -1, 3, 20)});
  EXPECT_EQ(all.timing().server_us(), 50);
  EXPECT_EQ(all.timing().kernel_us(), 6);
  EXPECT_EQ(all.timing().bytes(), 40u);
  EXPECT_EQ(all.timing().chunks(), 3u);
  EXPECT_EQ(all.kernel(), "cpu");
}

TEST(PartTargetsTest, AListStartsEachPartAtTheNextServer) {
  EXPECT_EQ(PartTargets("ipv4:a:1,b:2,c:3", 4),
            (std::vector<std::string>{"ipv4:a:1,b:2,c:3", "ipv4:b:2,c:3,a:1", "ipv4:c:3,a:1,b:2",
                                      "ipv4:a:1,b:2,c:3"}));
  EXPECT_EQ(PartTargets("ipv6:[::1]:1,[::1]:2", 2),
            (std::vector<std::string>{"ipv6:[::1]:1,[::1]:2", "ipv6:[::1]:2,[::1]:1"}));
  // One server, or a DNS name (round robin decides): the target as it is.
  EXPECT_EQ(PartTargets("127.0.0.1:5", 2),
            (std::vector<std::string>{"127.0.0.1:5", "127.0.0.1:5"}));
  EXPECT_EQ(PartTargets("dns:///svc:5", 2),
            (std::vector<std::string>{"dns:///svc:5", "dns:///svc:5"}));
  EXPECT_FALSE(ListsServers("dns:///svc:5"));  // the resolver's to say
  EXPECT_TRUE(ListsServers("ipv4:a:1,b:2"));
  EXPECT_TRUE(ListsServers("ipv6:[::1]:1,[::1]:2"));
  EXPECT_FALSE(ListsServers("ipv4:a:1"));
  EXPECT_FALSE(ListsServers("host:1"));
}

TEST(SplitIntoPartsTest, PartsAreContiguousAndAsEvenAsCanBe) {
  for (uint64_t n : {uint64_t{1}, uint64_t{2}, uint64_t{31}, uint64_t{1000003}}) {
    for (uint32_t streams : {1u, 3u, 8u, 40u}) {
      const auto parts = SplitIntoParts(n, streams);
      ASSERT_EQ(parts.size(), std::min<uint64_t>(n, streams)) << n << " " << streams;
      uint64_t next = 0, smallest = n, largest = 0;
      for (const auto& [begin, count] : parts) {
        EXPECT_EQ(begin, next);
        EXPECT_GT(count, 0u);
        next += count;
        smallest = std::min(smallest, count);
        largest = std::max(largest, count);
      }
      EXPECT_EQ(next, n);
      EXPECT_LE(largest - smallest, 1u);
    }
  }
  EXPECT_TRUE(SplitIntoParts(0, 4).empty());
}

}  // namespace
}  // namespace gpureduce::client
