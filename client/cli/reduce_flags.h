#pragma once

// The flags of `gpureduce reduce`: the ops, the input and its dtype, an array request's layout,
// how it is sent, --verify.

#include <cstdint>
#include <string>

#include "client/cli/array_request.h"
#include "client/cli/command.h"
#include "common/flags.h"

namespace gpureduce::cli {

struct ReduceFlags {
  ConnectionOptions connection;
  std::string op = "sum";
  std::string kernel = "auto";
  uint32_t block_size = 0;
  int64_t device = -1;
  uint64_t chunk_bytes = uint64_t{1} << 20;
  std::string format = "auto";
  int64_t random = -1;
  uint64_t seed = 1;
  bool values = false;
  bool verify = false;
  uint32_t streams = 1;
  std::string shared_memory;  // "", or the kind: system (the only one the CLI makes) or cuda
  std::string dtype;          // "": a .npy file's own, else float32
  double ddof = 0;
  ArrayFlags array;  // --shape, --axis, --keepdims, --segments, --output
};

// Adds `gpureduce reduce`'s flags to `flags`, each stored in `f`.
void RegisterReduceFlags(FlagSet& flags, ReduceFlags* f);

}  // namespace gpureduce::cli
