#include "client/shared_memory/registered_region.h"

#include <utility>

namespace gpureduce::client {

absl::StatusOr<RegisteredRegion> RegisteredRegion::RegisterSystem(ReducerClient& client,
                                                                  const SharedMemoryObject& object,
                                                                  const CallOptions& options,
                                                                  std::string name) {
  if (name.empty()) name = object.region_name();
  const absl::Time start = absl::Now();
  absl::StatusOr<v1::SharedMemoryRegion> region =
      client.RegisterSystemSharedMemory(name, object.key(), 0, object.size(), options,
                                        /*unlink_key=*/true);
  const absl::Duration took = absl::Now() - start;
  if (!region.ok()) return region.status();
  // The server echoes the name; keep ours should it not.
  if (region->name().empty()) region->set_name(name);
  return RegisteredRegion(&client, *std::move(region), took);
}

RegisteredRegion::RegisteredRegion(RegisteredRegion&& other) noexcept
    : client_(std::exchange(other.client_, nullptr)),
      region_(std::move(other.region_)),
      client_register_time_(other.client_register_time_) {}

RegisteredRegion& RegisteredRegion::operator=(RegisteredRegion&& other) noexcept {
  if (this != &other) {
    Unregister().IgnoreError();
    client_ = std::exchange(other.client_, nullptr);
    region_ = std::move(other.region_);
    client_register_time_ = other.client_register_time_;
  }
  return *this;
}

RegisteredRegion::~RegisteredRegion() { Unregister().IgnoreError(); }

absl::Status RegisteredRegion::Unregister(absl::Duration timeout) {
  ReducerClient* client = std::exchange(client_, nullptr);
  if (client == nullptr) return absl::OkStatus();
  CallOptions options;
  options.timeout = timeout;
  absl::StatusOr<std::vector<std::string>> names =
      client->UnregisterSharedMemory(region_.name(), options);
  if (!names.ok() && names.status().code() != absl::StatusCode::kNotFound) return names.status();
  return absl::OkStatus();
}

}  // namespace gpureduce::client
