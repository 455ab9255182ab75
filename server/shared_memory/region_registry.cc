#include "server/shared_memory/region_registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/shared_memory/local_peer.h"

namespace gpureduce::server {

absl::Status RegionRegistry::CheckEnabled() const {
  if (limits_.enabled) return absl::OkStatus();
  return absl::PermissionDeniedError(
      "this server does not accept shared memory: start it with --allow-shared-memory (clients "
      "on its host can then have it read their memory in place)");
}

absl::Status RegionRegistry::CheckCaller(absl::string_view peer) const {
  RETURN_IF_ERROR(CheckEnabled());
  return limits_.any_peer ? absl::OkStatus() : CheckLocalPeer(peer);
}

absl::StatusOr<std::shared_ptr<const Region>> RegionRegistry::Register(
    const std::string& name, uint64_t byte_size,
    absl::FunctionRef<absl::StatusOr<std::shared_ptr<Region>>()> open) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (regions_.contains(name)) {
      return absl::AlreadyExistsError(
          absl::StrCat("a region named \"", name,
                       "\" is already registered; unregister it first or pick "
                       "another name"));
    }
    if (regions_.size() >= limits_.max_regions) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the server holds its limit of ", limits_.max_regions,
                       " regions (--shared-memory-max-regions); unregister one first"));
    }
    if (byte_size > limits_.max_total_bytes - total_bytes_) {
      return absl::ResourceExhaustedError(
          absl::StrCat("registering ", byte_size, " bytes would pass the server's limit of ",
                       limits_.max_total_bytes, " bytes of regions (--shared-memory-max-bytes); ",
                       total_bytes_, " are registered"));
    }
    regions_.emplace(name, nullptr);
    total_bytes_ += byte_size;
  }
  absl::StatusOr<std::shared_ptr<Region>> opened = open();
  std::lock_guard<std::mutex> lock(mu_);
  if (!opened.ok()) {
    regions_.erase(name);
    total_bytes_ -= byte_size;
    return opened.status();
  }
  regions_[name] = *opened;
  return std::shared_ptr<const Region>(*opened);
}

absl::StatusOr<std::shared_ptr<const Region>> RegionRegistry::Find(const std::string& name) const {
  RETURN_IF_ERROR(CheckEnabled());
  std::lock_guard<std::mutex> lock(mu_);
  const auto found = regions_.find(name);
  if (found == regions_.end() || found->second == nullptr) {
    return absl::NotFoundError(absl::StrCat("no shared-memory region named \"", name,
                                            "\" is registered (ListSharedMemory lists them)"));
  }
  return found->second;
}

// The regions removed are released (unpinned, closed, unmapped: milliseconds per GiB) by the
// caller's `released` after the lock is let go, so lookups never wait for that.
absl::StatusOr<std::vector<std::string>> RegionRegistry::Unregister(const std::string& name) {
  std::shared_ptr<const Region> released;
  std::lock_guard<std::mutex> lock(mu_);
  const auto found = regions_.find(name);
  if (found == regions_.end() || found->second == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("no shared-memory region named \"", name, "\" is registered"));
  }
  total_bytes_ -= found->second->info().byte_size;
  released = std::move(found->second);
  regions_.erase(found);
  return std::vector<std::string>{name};
}

std::vector<std::string> RegionRegistry::UnregisterAll() {
  std::vector<std::shared_ptr<const Region>> released;  // let go after the lock (see above)
  std::vector<std::string> names;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = regions_.begin(); it != regions_.end();) {
    if (it->second == nullptr) {  // still registering: not yet a region to remove
      ++it;
      continue;
    }
    total_bytes_ -= it->second->info().byte_size;
    names.push_back(it->first);
    released.push_back(std::move(it->second));
    regions_.erase(it++);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::shared_ptr<const Region>> RegionRegistry::List() const {
  std::vector<std::shared_ptr<const Region>> regions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [name, region] : regions_) {
      if (region != nullptr) regions.push_back(region);
    }
  }
  std::sort(regions.begin(), regions.end(),
            [](const auto& a, const auto& b) { return a->info().name < b->info().name; });
  return regions;
}

uint64_t RegionRegistry::total_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return total_bytes_;
}

}  // namespace gpureduce::server
