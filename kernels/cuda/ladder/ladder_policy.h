#pragma once

// The reduction ladder of the seed documents as data: one policy per variant, read by the kernel
// catalogue (host) and the dispatch (CUDA). Plain C++ with no dependencies.

#include <cstdint>

#include "kernels/kernel_id.h"

namespace gpureduce::kernels {

struct LadderPolicy {
  KernelId id;  // in the catalogue; the variant, to the dispatch
  const char* name;
  const char* description;
  const char* lineage;
  const char* combine;  // how block results meet: what the kernel catalogue reports
  uint32_t default_block_size;
  uint32_t min_block_size;  // powers of two from min to max, both included
  uint32_t max_block_size;
  uint32_t loads_per_thread;  // elements each thread adds while loading (grid_stride: at least)
  bool deterministic;
};

// Block sizes: 256 is the seeds' choice (003, 004) and the one every variant runs; variants that
// read sdata[tid + 32] in their last warp need 64 threads at least.
inline constexpr LadderPolicy kLadder[] = {
    {KernelId::kAtomicGlobal, "atomic_global",
     "every thread atomically combines its element into the one global result (CAS loops for "
     "prod/min/max)",
     "003 #1, 002 kernel 0", "global atomics", 256, 32, 1024, 1, false},
    {KernelId::kAtomicShared, "atomic_shared",
     "atomics into one shared-memory value per block, then one global atomic per block", "003 #2",
     "shared then global atomics", 256, 32, 1024, 1, false},
    {KernelId::kInterleavedDivergent, "interleaved_divergent",
     "shared-memory tree, interleaved addressing with a modulo test: divergent warps",
     "004 reduce0, 003 #3, 002 kernels 1-2, 000 #1", "second pass over block partials", 256, 32,
     1024, 1, true},
    {KernelId::kInterleavedStrided, "interleaved_strided",
     "interleaved addressing with a strided index: no divergence, shared-memory bank conflicts",
     "004 reduce1, 003 #4, 002 kernel 3, 000 #2", "second pass over block partials", 256, 32, 1024,
     1, true},
    {KernelId::kSequential, "sequential",
     "sequential addressing: conflict-free, half the threads idle from the first step",
     "004 reduce2, 003 #5, 002 kernel 4, 000 #3, 001", "second pass over block partials", 256, 32,
     1024, 1, true},
    {KernelId::kFirstAddLoad, "first_add_load",
     "the first add during the global load: each thread loads two elements, half the blocks",
     "004 reduce3, 003 #6, 001", "second pass over block partials", 256, 32, 1024, 2, true},
    {KernelId::kUnrollLastWarp, "unroll_last_warp",
     "the last warp unrolled warp-synchronously, with __syncwarp between steps (Volta+)",
     "003 #7, 002 kernel 6", "second pass over block partials", 256, 64, 1024, 2, true},
    {KernelId::kUnrollComplete, "unroll_complete",
     "completely unrolled over a templated block size", "004 reduce5, 003 #8, 002 kernel 5",
     "second pass over block partials", 256, 64, 1024, 2, true},
    {KernelId::kWarpShuffle, "warp_shuffle",
     "the last warp reduced with __shfl_down_sync instead of shared memory",
     "004 reduce4, 003 #9, 002 kernel 7", "second pass over block partials", 256, 32, 1024, 2,
     true},
    {KernelId::kGridStride, "grid_stride",
     "thread coarsening (Brent): a grid sized to the device, each thread summing many elements "
     "on a grid-stride loop, then a shuffle block reduction",
     "004 reduce6, 003 #10, 002 kernel 8", "second pass over block partials (one block)", 256, 32,
     1024, 2, true},
};

// The policy of a ladder kernel; nullptr for the other kernels.
constexpr const LadderPolicy* FindLadderPolicy(KernelId id) {
  for (const LadderPolicy& policy : kLadder) {
    if (policy.id == id) return &policy;
  }
  return nullptr;
}

}  // namespace gpureduce::kernels
