#pragma once

// Blocks of a shared-memory object, read with pread: an object its owner truncates after
// registration then reads short and the request fails with a clear error, where reading through
// a mapping would raise SIGBUS in the server.

#include <cstdint>

#include "absl/status/status.h"
#include "kernels/reduce.h"

namespace gpureduce::runtime {

// Elements of `element_bytes` each from byte `file_offset` of `fd` on; each calling thread reads
// into a buffer of its own.
kernels::cpu::BlockSource FileBlockSource(int fd, uint64_t file_offset, size_t element_bytes);

// Reads bytes [from, from + bytes) of `fd` into `out`; FAILED_PRECONDITION where the object ends
// before (its owner truncated it).
absl::Status ReadFileBytes(int fd, uint64_t from, size_t bytes, char* out);

}  // namespace gpureduce::runtime
