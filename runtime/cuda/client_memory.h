#pragma once

// Client memory the CUDA backend reads in place: host pages pinned for DMA (cudaHostRegister)
// and another process's device allocation (cudaIpcOpenMemHandle), each released by its hold.

#include <cstddef>
#include <memory>
#include <span>

#include "absl/status/statusor.h"
#include "runtime/cuda/device.h"
#include "runtime/shared_memory.h"

namespace gpureduce::runtime {

// Pins `bytes` at `base` (page-aligned, mapped read only) for every GPU's copies.
absl::StatusOr<std::unique_ptr<MemoryHold>> PinHostMemory(const void* base, size_t bytes);

// Opens a 64-byte cudaIpcMemHandle_t on `device`; the allocation's size comes from the driver.
absl::StatusOr<OpenedDeviceMemory> OpenIpcMemory(std::span<const std::byte> handle,
                                                 const Device& device);

}  // namespace gpureduce::runtime
