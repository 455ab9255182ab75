#pragma once

// The most memory clients can make the server hold beyond what it holds at rest, as a formula
// of its flags (docs/reliability.md, "Memory"; the server logs it at start):
//   admitted calls:  3 x C x max(R, 2K)           what admitted calls' messages hold while they
//                                                 arrive and are reduced (the bytes received, the
//                                                 parsed message, what malloc keeps)
//   connections:     N x (256 KiB + S x 96 KiB)   per connection the memory guard's slack for
//                                                 headers and small messages, and per stream a
//                                                 flow-control window of data (64 KiB) and the
//                                                 state of twice as many streams as may be open
//                                                 (16 KiB each: the guard's bound on resets)
//   the guard:       16 MiB + 10 ms of the network's bandwidth   what arrives between growth
//                                                 and eviction
// with C --max-concurrent-requests, R --max-request-bytes, K --max-chunk-bytes, N
// --max-connections and S --max-streams-per-connection.

#include <cstdint>

#include "server/connections/connection_gate.h"
#include "server/service_state.h"

namespace gpureduce::server {

struct MemoryBound {
  uint64_t admitted = 0;
  uint64_t connections = 0;
  uint64_t guard = 0;  // without the network's share, which depends on the link
  uint64_t total() const { return admitted + connections + guard; }
};

MemoryBound WorstCaseMemory(const ServiceLimits& limits, const ConnectionLimits& connections,
                            uint32_t streams_per_connection);

}  // namespace gpureduce::server
