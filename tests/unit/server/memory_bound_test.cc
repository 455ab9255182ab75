#include "server/memory_bound.h"

#include "gtest/gtest.h"

namespace gpureduce::server {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

TEST(MemoryBoundTest, TheDefaultsGiveTheFigureTheDocsState) {
  const ServiceLimits limits;
  const ConnectionLimits connections;
  const MemoryBound bound = WorstCaseMemory(limits, connections, 2 * limits.PerClientLimit());
  EXPECT_EQ(limits.TransportLimit(), 9 * kMiB);
  EXPECT_EQ(bound.admitted, 3 * 32 * 9 * kMiB);
  // 256 connections x (256 KiB + 48 x 64 KiB + (4 x 48 + 64) x 16 KiB)
  EXPECT_EQ(bound.connections, 256 * (kMiB / 4 + 3 * kMiB + 4 * kMiB));
  EXPECT_EQ(bound.total(), 2736 * kMiB);
}

TEST(MemoryBoundTest, EachTermFollowsItsFlags) {
  ServiceLimits limits;
  ConnectionLimits connections;
  const MemoryBound before = WorstCaseMemory(limits, connections, 48);
  limits.max_concurrent_requests *= 2;
  EXPECT_EQ(WorstCaseMemory(limits, connections, 48).admitted, 2 * before.admitted);
  connections.max_connections /= 2;
  EXPECT_EQ(WorstCaseMemory(limits, connections, 48).connections, before.connections / 2);
  limits.max_chunk_bytes = 64 * kMiB;  // the larger payload limit sets the transport limit
  EXPECT_EQ(limits.TransportLimit(), 129 * kMiB);
}

}  // namespace
}  // namespace gpureduce::server
