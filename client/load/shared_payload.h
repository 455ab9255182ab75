#pragma once

// gpureduce-load's payloads in shared memory (--shared-memory): regions holding them one after
// another, in a POSIX object this process owns (system) or in its memory on a GPU (cuda; one
// region per GPU of --shared-memory-devices), registered with the server for the whole run and
// unregistered at the end. Requests then refer
// to it instead of carrying it, which measures the server's zero-copy path.

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "absl/status/statusor.h"
#include "client/reducer_client.h"

namespace gpureduce::client {

class SharedPayload {
 public:
  enum class Kind { kSystem, kCuda };

  // "system" or "cuda" (UNIMPLEMENTED where this build has no CUDA).
  static absl::StatusOr<Kind> ParseKind(const std::string& name);
  // `device`: the GPU a cuda region is allocated on (ignored for system).
  static absl::StatusOr<std::unique_ptr<SharedPayload>> Create(Kind kind, uint64_t bytes,
                                                               int device = 0);
  virtual ~SharedPayload() = default;

  // Copies `data` to byte `offset` of the region.
  virtual absl::Status Write(uint64_t offset, std::span<const std::byte> data) = 0;

  // Registers the whole region under `name`; it stays registered until this object goes.
  absl::Status Register(ReducerClient& client, const std::string& name);
  const std::string& name() const { return name_; }
  uint64_t bytes() const { return bytes_; }
  // The server's time to map and pin (system) or open (cuda) the region, and the client's.
  double server_register_us() const { return server_register_us_; }
  double client_register_us() const { return client_register_us_; }

 protected:
  explicit SharedPayload(uint64_t bytes) : bytes_(bytes) {}
  // Registers `bytes_` under `name` as this kind of region.
  virtual absl::StatusOr<v1::SharedMemoryRegion> RegisterWith(ReducerClient& client,
                                                              const std::string& name) = 0;
  // Unregisters, if registered; subclasses call it first in their destructor, before the memory
  // goes.
  void Unregister();

  const uint64_t bytes_;

 private:
  ReducerClient* client_ = nullptr;
  std::string name_;
  double server_register_us_ = 0;
  double client_register_us_ = 0;
};

}  // namespace gpureduce::client
