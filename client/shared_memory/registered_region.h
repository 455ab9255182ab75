#pragma once

// A shared-memory region registered with a server for as long as this object lives: the
// destructor unregisters it, so a failure or an interrupt on the way out leaves nothing
// registered. Move-only. The ReducerClient must outlive it.

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/reducer_client.h"
#include "client/shared_memory/shared_memory_object.h"
#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::client {

class RegisteredRegion {
 public:
  // Registers the whole of `object` (offset 0, object.size() bytes) under `name`, by default
  // the object's region_name(), and has the server remove the object's name from /dev/shm once
  // it has mapped it (the object then lives as long as the two mappings). The server's errors
  // come back as they are.
  static absl::StatusOr<RegisteredRegion> RegisterSystem(ReducerClient& client,
                                                         const SharedMemoryObject& object,
                                                         const CallOptions& options = {},
                                                         std::string name = "");

  RegisteredRegion(RegisteredRegion&& other) noexcept;
  RegisteredRegion& operator=(RegisteredRegion&& other) noexcept;
  RegisteredRegion(const RegisteredRegion&) = delete;
  RegisteredRegion& operator=(const RegisteredRegion&) = delete;
  // Unregisters (within kUnregisterTimeout), ignoring errors: call Unregister() to see them.
  ~RegisteredRegion();

  static constexpr absl::Duration kUnregisterTimeout = absl::Seconds(5);

  // The region as the server reported it at registration (register_us: its own time).
  const v1::SharedMemoryRegion& region() const { return region_; }
  const std::string& name() const { return region_.name(); }
  // Registration as the client saw it: the call from start to answer.
  absl::Duration client_register_time() const { return client_register_time_; }
  bool registered() const { return client_ != nullptr; }

  // Unregisters now. NOT_FOUND (someone else unregistered it) counts as done. Afterwards
  // registered() is false whatever the outcome: the call is not repeated.
  absl::Status Unregister(absl::Duration timeout = kUnregisterTimeout);

 private:
  RegisteredRegion(ReducerClient* client, v1::SharedMemoryRegion region, absl::Duration time)
      : client_(client), region_(std::move(region)), client_register_time_(time) {}

  ReducerClient* client_ = nullptr;  // null: not (or no longer) registered
  v1::SharedMemoryRegion region_;
  absl::Duration client_register_time_;
};

}  // namespace gpureduce::client
