#include "common/malloc_tuning.h"

#include <malloc.h>

namespace gpureduce {

void TuneMallocForLargeMessages() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);   // glibc's maximum on 64-bit
  mallopt(M_TRIM_THRESHOLD, 256 << 20);  // give memory back only when this much is free
  mallopt(M_TOP_PAD, 64 << 20);
  // Each arena keeps its freed memory (the trim threshold above); few arenas keep the total
  // small on many-core hosts, where gRPC runs many threads.
  mallopt(M_ARENA_MAX, 4);
}

}  // namespace gpureduce
