#pragma once

// The most memory clients can make the server hold beyond what it holds at rest, as a formula
// of its flags (docs/reliability.md, "Memory"; the server logs it at start):
//   admitted calls:  3 x C x (2 max(R, K) + 1 MiB)   what admitted calls' messages hold while
//                                                 they arrive and are reduced: the most gRPC
//                                                 receives of one before refusing it (the
//                                                 transport limit), three times for the parsed
//                                                 message, a stream's second chunk and what
//                                                 malloc keeps
//   connections:     N x (256 KiB + S x 64 KiB + (4 S + 64) x 16 KiB)   per connection the memory
//                                                 guard's slack for headers and small messages,
//                                                 a flow-control window of data (64 KiB) per
//                                                 open stream, and the state (16 KiB each) of
//                                                 as many streams as the guard lets a connection
//                                                 have in the server
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
