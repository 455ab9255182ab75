#pragma once

// A POSIX shared-memory object this process creates, owns and maps read/write, for a server on
// the same host to map by name (RegisterSystemSharedMemory): the client writes floats into it
// and reduces them by reference, with no copy over gRPC. Move-only; the destructor unmaps it and
// unlinks its name, so nothing is left in /dev/shm (a server that mapped it keeps its pages until
// it unmaps them). Once a server has mapped it, Unlink() removes the name at once: then not even
// a process killed outright (SIGKILL) leaves it behind.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace gpureduce::client {

class SharedMemoryObject {
 public:
  // Creates "/gpureduce-<pid>-<16 random hex digits>" (shm_open with O_CREAT | O_EXCL | O_RDWR,
  // mode 0600; another name is drawn if that one exists), sizes it to `bytes` and reserves its
  // pages (posix_fallocate), so that a full /dev/shm is this error and not a SIGBUS on a later
  // write, then maps it read/write. 0 bytes is an object with no mapping (data() is null).
  // Errors, each naming the object and the size asked for: RESOURCE_EXHAUSTED when /dev/shm
  // has no room (with what it has free and, for Docker, --shm-size) or the mapping does not fit;
  // INVALID_ARGUMENT for a size no file can have; PERMISSION_DENIED; UNIMPLEMENTED where there is
  // no POSIX shared memory. A failed Create leaves no object behind.
  static absl::StatusOr<SharedMemoryObject> Create(uint64_t bytes);

  SharedMemoryObject(SharedMemoryObject&& other) noexcept;
  SharedMemoryObject& operator=(SharedMemoryObject&& other) noexcept;
  SharedMemoryObject(const SharedMemoryObject&) = delete;
  SharedMemoryObject& operator=(const SharedMemoryObject&) = delete;
  ~SharedMemoryObject() { Close().IgnoreError(); }

  // The object's name as shm_open takes it: "/gpureduce-<pid>-<hex>"; the server's `key`.
  const std::string& key() const { return key_; }
  // The key without its '/': a valid region name for the server ([A-Za-z0-9._-]).
  std::string region_name() const { return key_.empty() ? key_ : key_.substr(1); }
  uint64_t size() const { return size_; }
  bool is_open() const { return !key_.empty(); }

  void* data() { return data_; }
  const void* data() const { return data_; }
  // The mapping as size() / 4 floats (a trailing partial float is left out).
  absl::Span<float> floats() { return {static_cast<float*>(data_), size_ / sizeof(float)}; }
  absl::Span<const float> floats() const {
    return {static_cast<const float*>(data_), size_ / sizeof(float)};
  }

  // Removes the object's name from /dev/shm now; the mapping (this process's, and a server's
  // that registered it) stays. key() still names what it was. Safe to call twice.
  absl::Status Unlink();
  bool linked() const { return linked_; }

  // Unmaps the object and unlinks its name now (the destructor does the same); afterwards the
  // object is closed (is_open() false). An unlink the owner no longer needs (the name is already
  // gone) is not an error. Safe to call twice.
  absl::Status Close();

 private:
  SharedMemoryObject(std::string key, void* data, uint64_t size)
      : key_(std::move(key)), data_(data), size_(size) {}

  std::string key_;  // empty: closed (or moved from)
  void* data_ = nullptr;
  uint64_t size_ = 0;
  bool linked_ = true;  // the name is in /dev/shm
};

// "/gpureduce-<pid>-<16 hex digits>", a fresh random suffix each call.
std::string MakeSharedMemoryKey();

}  // namespace gpureduce::client
