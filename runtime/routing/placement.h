#pragma once

// Where an `auto` request runs, by the time each reader was measured to take for data where the
// request's lies: the CPU, a GPU, or (a region of system shared memory) both at once.

#include <cstdint>
#include <string>

namespace gpureduce::runtime {

// A reader's time for a request of `bytes`: what it costs before the first byte (a launch, a
// pool's wake-up, an answer) and then per byte.
struct PathCost {
  double fixed_seconds = 0;
  double seconds_per_byte = 0;

  double Seconds(double bytes) const { return fixed_seconds + bytes * seconds_per_byte; }
  double gbps() const { return seconds_per_byte > 0 ? 1e-9 / seconds_per_byte : 0; }
  // The line through two measured requests (small_bytes < large_bytes), neither term below 0:
  // a small request measured slower than the large one's rate allows sets the fixed cost.
  static PathCost Through(uint64_t small_bytes, double small_seconds, uint64_t large_bytes,
                          double large_seconds);
};

// The CPU's and one GPU's costs for data in one location.
struct ReaderCosts {
  PathCost cpu;
  PathCost gpu;
};

enum class Placement { kCpu, kGpu, kBoth };

const char* PlacementName(Placement placement);

// The reader, or the pair, expected to end `bytes` first. kBoth only where `cpu_share` is
// strictly between 0 and 1: the CPU reads that share of the bytes while the GPU reads the rest,
// the pair ending with the slower of the two. A share of 1 or more: the CPU alone.
Placement Place(const ReaderCosts& costs, uint64_t bytes, double cpu_share = 0);

// The CPU's share of `bytes` that ends both readers together, in [0, 1].
double EvenShare(const ReaderCosts& costs, uint64_t bytes);

// For the logs: both readers' costs and where Place sends requests of 1 byte up to `limit`
// ("the CPU, the CPU and a GPU at once from 32MiB, ...").
std::string DescribePlacement(const ReaderCosts& costs, double cpu_share, uint64_t limit);

}  // namespace gpureduce::runtime
