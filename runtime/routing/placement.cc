#include "runtime/routing/placement.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/byte_size.h"

namespace gpureduce::runtime {

PathCost PathCost::Through(uint64_t small_bytes, double small_seconds, uint64_t large_bytes,
                           double large_seconds) {
  const double span = static_cast<double>(large_bytes - small_bytes);
  double per_byte = span > 0 ? (large_seconds - small_seconds) / span : 0;
  // A large request measured no slower than a small one (noise, or a path whose fixed cost
  // swamps both): its average rate is the best the data says.
  if (per_byte <= 0) per_byte = large_seconds / static_cast<double>(large_bytes);
  const double fixed = small_seconds - static_cast<double>(small_bytes) * per_byte;
  return {.fixed_seconds = std::max(fixed, 0.0), .seconds_per_byte = per_byte};
}

const char* PlacementName(Placement placement) {
  switch (placement) {
    case Placement::kCpu:
      return "the CPU";
    case Placement::kGpu:
      return "a GPU";
    case Placement::kBoth:
      return "the CPU and a GPU at once";
  }
  return "?";
}

Placement Place(const ReaderCosts& costs, uint64_t bytes, double cpu_share) {
  if (cpu_share >= 1) return Placement::kCpu;
  const double n = static_cast<double>(bytes);
  const double cpu = costs.cpu.Seconds(n);
  const double gpu = costs.gpu.Seconds(n);
  Placement best = cpu <= gpu ? Placement::kCpu : Placement::kGpu;
  if (cpu_share > 0) {
    const double both =
        std::max(costs.cpu.Seconds(cpu_share * n), costs.gpu.Seconds((1 - cpu_share) * n));
    if (both < std::min(cpu, gpu)) best = Placement::kBoth;
  }
  return best;
}

double EvenShare(const ReaderCosts& costs, uint64_t bytes) {
  // cpu.fixed + s n cpu.per_byte = gpu.fixed + (1 - s) n gpu.per_byte
  const double n = static_cast<double>(bytes);
  const double per_byte = costs.cpu.seconds_per_byte + costs.gpu.seconds_per_byte;
  if (n <= 0 || per_byte <= 0) return 0;
  const double share =
      (costs.gpu.fixed_seconds - costs.cpu.fixed_seconds + n * costs.gpu.seconds_per_byte) /
      (n * per_byte);
  return std::clamp(share, 0.0, 1.0);
}

std::string DescribePlacement(const ReaderCosts& costs, double cpu_share, uint64_t limit) {
  std::string text = absl::StrFormat(
      "the CPU %.1f us + %.1f GB/s, a GPU %.1f us + %.1f GB/s: ", 1e6 * costs.cpu.fixed_seconds,
      costs.cpu.gbps(), 1e6 * costs.gpu.fixed_seconds, costs.gpu.gbps());
  Placement last = Place(costs, 1, cpu_share);
  absl::StrAppend(&text, PlacementName(last));
  for (uint64_t bytes = 2; bytes != 0 && bytes <= limit; bytes <<= 1) {
    const Placement now = Place(costs, bytes, cpu_share);
    if (now == last) continue;
    absl::StrAppend(&text, ", ", PlacementName(now), " from ", FormatByteSize(bytes));
    last = now;
  }
  absl::StrAppend(&text, " (up to ", FormatByteSize(limit), ")");
  return text;
}

}  // namespace gpureduce::runtime
