#pragma once

// The server's registered shared-memory regions, by name, within its limits. Registration opens
// a region outside the lock (pinning gigabytes takes a while) under a reservation of its name
// and bytes, so concurrent registrations cannot pass the limits together.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/shared_memory/region.h"

namespace gpureduce::server {

struct RegionLimits {
  bool enabled = false;  // --allow-shared-memory
  uint32_t max_regions = 64;
  uint64_t max_total_bytes = uint64_t{64} << 30;
  bool any_peer = false;   // false: loopback and Unix-socket clients only (local_peer.h)
  std::string key_prefix;  // non-empty: system objects' keys must start with it
};

class RegionRegistry {
 public:
  explicit RegionRegistry(const RegionLimits& limits) : limits_(limits) {}

  const RegionLimits& limits() const { return limits_; }

  // PERMISSION_DENIED unless the server allows shared memory.
  absl::Status CheckEnabled() const;
  // CheckEnabled, and PERMISSION_DENIED for a remote `peer` unless any peer is allowed.
  absl::Status CheckCaller(absl::string_view peer) const;

  // Reserves `name` and `byte_size` within the limits, runs `open` and registers what it
  // returns. ALREADY_EXISTS for a name in use, RESOURCE_EXHAUSTED past a limit.
  absl::StatusOr<std::shared_ptr<const Region>> Register(
      const std::string& name, uint64_t byte_size,
      absl::FunctionRef<absl::StatusOr<std::shared_ptr<Region>>()> open);

  // NOT_FOUND for a name that is not registered.
  absl::StatusOr<std::shared_ptr<const Region>> Find(const std::string& name) const;

  // The names removed; NOT_FOUND for a name that is not registered. A request reading a region
  // keeps it open until it ends.
  absl::StatusOr<std::vector<std::string>> Unregister(const std::string& name);
  std::vector<std::string> UnregisterAll();

  std::vector<std::shared_ptr<const Region>> List() const;
  uint64_t total_bytes() const;

 private:
  const RegionLimits limits_;
  mutable std::mutex mu_;
  // Null while its registration runs.
  absl::flat_hash_map<std::string, std::shared_ptr<const Region>> regions_;
  uint64_t total_bytes_ = 0;  // registered and reserved
};

}  // namespace gpureduce::server
