#include "server/memory_bound.h"

namespace gpureduce::server {
namespace {

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kStreamWindowBytes = 64 * kKiB;  // gRPC's initial stream window
constexpr uint64_t kStreamStateBytes = 16 * kKiB;   // a stream's call, measured at 5-10 KiB

}  // namespace

MemoryBound WorstCaseMemory(const ServiceLimits& limits, const ConnectionLimits& connections,
                            uint32_t streams_per_connection) {
  MemoryBound bound;
  bound.admitted = 3 * uint64_t{limits.max_concurrent_requests} * limits.TransportLimit();
  const uint64_t live_streams =
      connections.max_live_streams > 0
          ? uint64_t(connections.max_live_streams)
          : uint64_t(ConnectionLimits::LiveStreamsFor(streams_per_connection));
  bound.connections = uint64_t{connections.max_connections} *
                      (connections.slack_bytes + streams_per_connection * kStreamWindowBytes +
                       live_streams * kStreamStateBytes);
  bound.guard = uint64_t{16} << 20;
  return bound;
}

}  // namespace gpureduce::server
