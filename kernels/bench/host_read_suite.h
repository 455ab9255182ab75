#pragma once

// gpureduce-bench --suite host-read (issue 24): the host's own read bandwidth, the ceiling of a
// reduction of system memory by the CPU and the GPUs together. Every hardware thread (or
// `threads`) reads its slice of `bytes` of populated memory once per run, adding its 64-bit words
// so that nothing is skipped; the median of `runs` after one warm-up, as GB/s. Needs no GPU.

#include <cstddef>
#include <cstdio>

namespace gpureduce::bench {

// Prints the probe's line to `out`; the exit code (1 where the memory cannot be had).
int RunHostReadSuite(size_t bytes, unsigned threads, unsigned runs, FILE* out);

}  // namespace gpureduce::bench
