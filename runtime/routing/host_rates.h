#pragma once

// What the CPU backend and one GPU each take to reduce data where requests leave it on this host
// (a message's bytes in the server's memory, a region of system shared memory), measured through
// the paths such requests take, so that an `auto` request goes where it ends first and a region
// can be cut in the shares that end at once (RoutingBackend).

#include <cstdint>

#include "absl/status/statusor.h"
#include "runtime/backend.h"
#include "runtime/routing/gpu_backend.h"
#include "runtime/routing/placement.h"

namespace gpureduce::runtime {

// Two request sizes timed on each reader: the line through them is its PathCost.
struct MeasuredSizes {
  uint64_t small_bytes = 0;
  uint64_t large_bytes = 0;
};

// A unary message's floats in ordinary (pageable) memory: the CPU reduces them where they lie, a
// GPU copies them through its pinned staging first. Each size's best of a few rounds, after one
// that wakes the path up; a few tens of milliseconds. For the self-check.
absl::StatusOr<ReaderCosts> MeasureMessageCosts(Backend& cpu, GpuBackend& gpus,
                                                MeasuredSizes sizes = {uint64_t{64} << 10,
                                                                       uint64_t{64} << 20});

// A region of system shared memory (a memfd, pinned by `gpus`): the CPU's pread of the object,
// the GPU's copies from its pinned pages. A few hundred milliseconds; for the self-check.
absl::StatusOr<ReaderCosts> MeasureRegionCosts(Backend& cpu, GpuBackend& gpus,
                                               MeasuredSizes sizes = {uint64_t{1} << 20,
                                                                      uint64_t{256} << 20});

}  // namespace gpureduce::runtime
