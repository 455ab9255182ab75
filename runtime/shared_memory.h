#pragma once

// Client memory the server reads in place (server/shared_memory/): a backend's hold on it, and
// what a session needs to read it. Part of the runtime's public API, with backend.h.

#include <cstddef>
#include <cstdint>
#include <memory>

namespace gpureduce::runtime {

// A backend's hold on client memory (host pages pinned for DMA, another process's device
// allocation opened by its IPC handle); released when destroyed.
class MemoryHold {
 public:
  virtual ~MemoryHold() = default;
};

// Another process's device allocation, opened in this one.
struct OpenedDeviceMemory {
  std::unique_ptr<MemoryHold> hold;
  const std::byte* data = nullptr;  // the allocation's start, on `device`
  uint64_t bytes = 0;               // its size, as the driver reports it
  int device = 0;
};

// `count` floats a request reads in place.
struct SharedSource {
  enum class Kind { kHost, kDevice };
  Kind kind = Kind::kHost;
  uint64_t count = 0;        // elements
  size_t element_bytes = 4;  // the request's dtype's size; the GPUs read only float32 here
  // kHost: a POSIX shared-memory object. The CPU reads it through `fd` with pread, never through
  // a mapping: an object its owner truncates then reads short (an error), where a mapping would
  // fault (SIGBUS). The GPUs copy from `pinned`, the server's mapping of the same bytes, whose
  // pages were pinned at registration and stay valid whatever the owner does.
  int fd = -1;
  uint64_t file_offset = 0;           // of the first element
  const std::byte* pinned = nullptr;  // null where the backend pinned nothing (the CPU)
  // kDevice: the first float on GPU `device`, read by the kernels where it is.
  const std::byte* device_data = nullptr;
  int device = -1;
};

}  // namespace gpureduce::runtime
