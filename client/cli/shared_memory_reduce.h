#pragma once

// `gpureduce reduce --shared-memory`: the input, of any dtype, goes into a POSIX shared-memory
// object on this host, registered with the server once and reduced by reference in one request
// for every op, with no copy over gRPC; the region is unregistered and the object removed on
// every way out (an error, Ctrl-C).

#include <cstdint>

#include "client/cli/array_request.h"
#include "client/cli/command.h"
#include "client/cli/reduce_request.h"
#include "client/input/open_source.h"

namespace gpureduce::cli {

struct SharedMemoryReduceFlags {
  ConnectionOptions connection;
  client::SourceOptions source;
  RequestSettings request;   // its dtype is the source's, whatever it says
  uint64_t piece_bytes = 0;  // the input is loaded in pieces of this many bytes (--chunk-size)
  bool verify = false;
  ArrayRequest array;  // --shape, --axis, --keepdims, --segments, resolved once the input is open
  std::string output;  // --output
};

// The exit code: 0, 1 (the server refused), 2 (usage, unreadable input, no shared memory here)
// or 128 + the signal when interrupted.
int RunSharedMemoryReduce(SharedMemoryReduceFlags& flags);

}  // namespace gpureduce::cli
