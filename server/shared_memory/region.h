#pragma once

// A registered shared-memory region: client memory the server reads in place, opened once at
// registration (a POSIX object mapped and pinned, or a CUDA IPC allocation) and released when
// the last holder lets go: the registry, or a request still reading it after its unregistration.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/backend.h"
#include "runtime/shared_memory.h"

namespace gpureduce::server {

struct RegionInfo {
  enum class Kind { kSystem, kCuda };
  std::string name;
  Kind kind = Kind::kSystem;
  std::string key;     // kSystem: the object's name
  int device_id = -1;  // kCuda
  uint64_t offset = 0;
  uint64_t byte_size = 0;
  bool writable = false;  // kSystem: opened read-write, so Write may put results there
  double register_us = 0;
};

class Region {
 public:
  // Opens POSIX shared-memory object `info.key` read only (read-write where info.writable), checks
  // that it holds the region, maps the region and has the backend pin it. Errors: INVALID_ARGUMENT
  // (a bad key, offset or size, or an object too small), NOT_FOUND, PERMISSION_DENIED, from the
  // backend its own.
  static absl::StatusOr<std::shared_ptr<Region>> OpenSystem(RegionInfo info,
                                                            runtime::Backend& backend);
  // Opens another process's device allocation by its IPC handle on `info.device_id`.
  static absl::StatusOr<std::shared_ptr<Region>> OpenCuda(RegionInfo info,
                                                          std::span<const std::byte> handle,
                                                          runtime::Backend& backend);
  ~Region();

  const RegionInfo& info() const { return info_; }
  uint32_t requests_in_flight() const { return in_flight_.load(std::memory_order_relaxed); }

  // What a request reads: `byte_size` bytes from `offset` in the region (checked by the caller).
  runtime::SharedSource Source(uint64_t offset, uint64_t byte_size, size_t element_bytes) const;

  // Writes `bytes` at `offset` in a writable system region (checked by the caller), through the
  // descriptor: the client sees them in its mapping.
  absl::Status Write(uint64_t offset, std::span<const std::byte> bytes) const;

  // A request's hold: the region stays open, and counted as in use, while a Use lives.
  class Use {
   public:
    explicit Use(std::shared_ptr<const Region> region);
    ~Use();
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;
    const Region& operator*() const { return *region_; }
    const Region* operator->() const { return region_.get(); }

   private:
    std::shared_ptr<const Region> region_;
  };

 private:
  explicit Region(RegionInfo info) : info_(std::move(info)) {}

  RegionInfo info_;
  int fd_ = -1;              // kSystem: read with pread by the CPU
  void* mapping_ = nullptr;  // kSystem, where the backend pins: the pages it pinned
  size_t mapping_bytes_ = 0;
  const std::byte* data_ = nullptr;  // the region's first byte: in the mapping, or on the device
  // Declared after the mapping: released (unpinned, closed) before it is unmapped.
  std::unique_ptr<runtime::MemoryHold> hold_;
  mutable std::atomic<uint32_t> in_flight_{0};
};

}  // namespace gpureduce::server
