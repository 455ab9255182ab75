#pragma once

// `gpureduce reduce --shared-memory`: the input goes into a POSIX shared-memory object on this
// host, registered with the server once and reduced by reference once per op, with no copy over
// gRPC; the region is unregistered and the object removed on every way out (an error, Ctrl-C).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "client/cli/command.h"
#include "client/input/open_source.h"
#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::cli {

struct SharedMemoryReduceFlags {
  ConnectionOptions connection;
  client::SourceOptions source;
  std::vector<v1::Op> ops;  // in order, at least one
  std::string kernel = "auto";
  uint32_t block_size = 0;
  int64_t device = -1;        // pin the requests to this device; -1: the server picks
  size_t piece_elements = 0;  // the input is loaded in pieces of this many floats
  bool verify = false;
};

// The exit code: 0, 1 (the server refused), 2 (usage, unreadable input, no shared memory here)
// or 128 + the signal when interrupted.
int RunSharedMemoryReduce(SharedMemoryReduceFlags& flags);

}  // namespace gpureduce::cli
