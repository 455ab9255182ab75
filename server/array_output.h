#pragma once

// An array request's results written into a region the client names (ReduceSpec.output, issue
// 23) instead of into the response: the region, held while the call lives, and where each op's
// array goes in it, all checked before any data is read.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/reduction/dtype.h"
#include "common/reduction/op.h"
#include "common/reduction/reduce_layout.h"
#include "gpureduce/v1/reduce.pb.h"
#include "server/shared_memory/region.h"
#include "server/shared_memory/region_registry.h"

namespace gpureduce::server {

class ArrayOutput {
 public:
  // spec.output for a request of `layout`'s outputs of `ops` over `dtype`: INVALID_ARGUMENT or
  // FAILED_PRECONDITION naming the field where the region is unknown, not writable, on a GPU, or
  // too small for every op's array.
  static absl::StatusOr<std::unique_ptr<ArrayOutput>> Resolve(const RegionRegistry& registry,
                                                              absl::string_view peer,
                                                              const v1::SharedMemoryRef& ref,
                                                              const ReduceLayout& layout,
                                                              std::span<const Op> ops, DType dtype);

  // INVALID_ARGUMENT where the payload (`input` in `input_region`) shares bytes with the output
  // in the same object: the results would overwrite data not yet read.
  absl::Status CheckApart(const Region& input_region, const v1::SharedMemoryRef& input) const;

  // Writes op `i`'s array; returns where in the region it starts.
  absl::StatusOr<uint64_t> Write(size_t i, std::span<const std::byte> bytes) const;

 private:
  ArrayOutput(std::shared_ptr<const Region> region, std::vector<uint64_t> offsets, uint64_t first,
              uint64_t end)
      : region_(std::move(region)), offsets_(std::move(offsets)), first_(first), end_(end) {}

  Region::Use region_;
  std::vector<uint64_t> offsets_;  // op i's array, from the region's start
  uint64_t first_ = 0;             // the bytes the arrays cover, from the region's start
  uint64_t end_ = 0;
};

}  // namespace gpureduce::server
