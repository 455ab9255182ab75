#pragma once

// The shared-memory RPCs of gpureduce.v1.Reducer, from proto to the registry and back. `peer`:
// the caller as gRPC names it (RegionRegistry::CheckCaller).

#include "absl/status/status.h"
#include "gpureduce/v1/reduce.pb.h"
#include "runtime/backend.h"
#include "server/shared_memory/region_registry.h"

namespace gpureduce::server {

absl::Status RegisterSystemSharedMemory(RegionRegistry& registry, runtime::Backend& backend,
                                        absl::string_view peer,
                                        const v1::RegisterSystemSharedMemoryRequest& request,
                                        v1::RegisterSharedMemoryResponse* response);
absl::Status RegisterCudaSharedMemory(RegionRegistry& registry, runtime::Backend& backend,
                                      absl::string_view peer,
                                      const v1::RegisterCudaSharedMemoryRequest& request,
                                      v1::RegisterSharedMemoryResponse* response);
absl::Status ListSharedMemory(const RegionRegistry& registry, absl::string_view peer,
                              v1::ListSharedMemoryResponse* response);
absl::Status UnregisterSharedMemory(RegionRegistry& registry, absl::string_view peer,
                                    const v1::UnregisterSharedMemoryRequest& request,
                                    v1::UnregisterSharedMemoryResponse* response);

// The region a Reduce request refers to, checked: `byte_size` bytes from `offset` within it,
// both multiples of the size of the request's `dtype`.
absl::StatusOr<std::shared_ptr<const Region>> ResolveSharedMemoryRef(const RegionRegistry& registry,
                                                                     absl::string_view peer,
                                                                     const v1::SharedMemoryRef& ref,
                                                                     DType dtype);

}  // namespace gpureduce::server
