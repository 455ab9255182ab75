#include "server/shared_memory/shared_memory_rpcs.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/reduction/op_name.h"
#include "common/status_macros.h"
#include "server/shared_memory/region_names.h"
#include "spdlog/spdlog.h"

namespace gpureduce::server {
namespace {

void ToProto(const Region& region, v1::SharedMemoryRegion* out) {
  const RegionInfo& info = region.info();
  out->set_name(info.name);
  out->set_kind(info.kind == RegionInfo::Kind::kCuda ? v1::SharedMemoryRegion::CUDA
                                                     : v1::SharedMemoryRegion::SYSTEM);
  out->set_key(info.key);
  out->set_device_id(info.device_id);
  out->set_offset(info.offset);
  out->set_byte_size(info.byte_size);
  out->set_requests_in_flight(region.requests_in_flight());
  out->set_register_us(info.register_us);
  out->set_writable(info.writable);
}

void LogRegistered(const Region& region) {
  const RegionInfo& info = region.info();
  spdlog::info(
      "shared memory: registered \"{}\" ({}, {} bytes at offset {}{}) in {:.0f} us", info.name,
      info.kind == RegionInfo::Kind::kCuda ? absl::StrCat("CUDA IPC on GPU ", info.device_id)
                                           : absl::StrCat("object ", info.key),
      info.byte_size, info.offset, info.writable ? ", writable" : "", info.register_us);
}

}  // namespace

absl::Status RegisterSystemSharedMemory(RegionRegistry& registry, runtime::Backend& backend,
                                        absl::string_view peer,
                                        const v1::RegisterSystemSharedMemoryRequest& request,
                                        v1::RegisterSharedMemoryResponse* response) {
  RETURN_IF_ERROR(registry.CheckCaller(peer));
  RETURN_IF_ERROR(CheckRegionName(request.name()));
  RETURN_IF_ERROR(CheckObjectKey(request.key()));
  const std::string& prefix = registry.limits().key_prefix;
  if (!absl::StartsWith(request.key(), prefix)) {
    return absl::PermissionDeniedError(
        absl::StrCat("this server maps only objects whose names start with \"", prefix,
                     "\" (--shared-memory-key-prefix); \"", request.key(), "\" does not"));
  }
  RegionInfo info;
  info.name = request.name();
  info.key = request.key();
  info.offset = request.offset();
  info.byte_size = request.byte_size();
  info.writable = request.writable();
  ASSIGN_OR_RETURN(
      std::shared_ptr<const Region> region, registry.Register(info.name, info.byte_size, [&] {
        absl::StatusOr<std::shared_ptr<Region>> opened = Region::OpenSystem(info, backend);
        // Mapped, and registered from here on (the registry reserved the name):
        // the key is no longer needed, so a client that dies now leaves nothing
        // in /dev/shm. Before the region is listed, so anyone who sees it sees
        // the key gone.
        if (opened.ok() && request.unlink_key() && shm_unlink(info.key.c_str()) != 0 &&
            errno != ENOENT) {
          spdlog::warn("region {}: could not unlink {} as asked: {}", info.name, info.key,
                       std::strerror(errno));
        }
        return opened;
      }));
  LogRegistered(*region);
  ToProto(*region, response->mutable_region());
  return absl::OkStatus();
}

absl::Status RegisterCudaSharedMemory(RegionRegistry& registry, runtime::Backend& backend,
                                      absl::string_view peer,
                                      const v1::RegisterCudaSharedMemoryRequest& request,
                                      v1::RegisterSharedMemoryResponse* response) {
  RETURN_IF_ERROR(registry.CheckCaller(peer));
  RETURN_IF_ERROR(CheckRegionName(request.name()));
  RegionInfo info;
  info.name = request.name();
  info.device_id = request.device_id();
  info.offset = request.offset();
  info.byte_size = request.byte_size();
  const auto* handle = reinterpret_cast<const std::byte*>(request.raw_handle().data());
  const std::span<const std::byte> handle_bytes(handle, request.raw_handle().size());
  ASSIGN_OR_RETURN(std::shared_ptr<const Region> region,
                   registry.Register(info.name, info.byte_size, [&] {
                     return Region::OpenCuda(info, handle_bytes, backend);
                   }));
  LogRegistered(*region);
  ToProto(*region, response->mutable_region());
  return absl::OkStatus();
}

absl::Status ListSharedMemory(const RegionRegistry& registry, absl::string_view peer,
                              v1::ListSharedMemoryResponse* response) {
  RETURN_IF_ERROR(registry.CheckCaller(peer));
  for (const auto& region : registry.List()) ToProto(*region, response->add_regions());
  response->set_max_regions(registry.limits().max_regions);
  response->set_max_total_bytes(registry.limits().max_total_bytes);
  response->set_total_bytes(registry.total_bytes());
  return absl::OkStatus();
}

absl::Status UnregisterSharedMemory(RegionRegistry& registry, absl::string_view peer,
                                    const v1::UnregisterSharedMemoryRequest& request,
                                    v1::UnregisterSharedMemoryResponse* response) {
  RETURN_IF_ERROR(registry.CheckCaller(peer));
  std::vector<std::string> names;
  if (request.all()) {
    if (!request.name().empty()) {
      return absl::InvalidArgumentError("set either name or all, not both");
    }
    names = registry.UnregisterAll();
  } else {
    if (request.name().empty()) {
      return absl::InvalidArgumentError("name a region to unregister, or set all");
    }
    ASSIGN_OR_RETURN(names, registry.Unregister(request.name()));
  }
  for (const std::string& name : names) {
    spdlog::info("shared memory: unregistered \"{}\"", name);
    response->add_names(name);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const Region>> ResolveSharedMemoryRef(const RegionRegistry& registry,
                                                                     absl::string_view peer,
                                                                     const v1::SharedMemoryRef& ref,
                                                                     DType dtype) {
  RETURN_IF_ERROR(registry.CheckCaller(peer));
  ASSIGN_OR_RETURN(std::shared_ptr<const Region> region, registry.Find(ref.region()));
  const uint64_t size = region->info().byte_size;
  const size_t element = DTypeSize(dtype);
  if (ref.byte_size() % element != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("shared_memory.byte_size (", ref.byte_size(), ") must be a multiple of ",
                     element, ": the request reads ", DTypeName(dtype), " values (spec.dtype)"));
  }
  // The values' address: a region starts at its offset in memory whose base is page-aligned (a
  // system object's mapping) or 256-byte aligned (a CUDA allocation).
  if ((region->info().offset + ref.offset()) % element != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shared_memory.offset (", ref.offset(), ") of region \"", ref.region(),
        "\", which starts at byte ", region->info().offset, " of its memory, puts the ",
        DTypeName(dtype), " values at byte ", region->info().offset + ref.offset(),
        ", not a multiple of ", element, " (their alignment)"));
  }
  if (ref.offset() > size || ref.byte_size() > size - ref.offset()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shared_memory reads ", ref.byte_size(), " bytes from offset ", ref.offset(),
        ", past the end of region \"", ref.region(), "\", which holds ", size, " bytes"));
  }
  return region;
}

}  // namespace gpureduce::server
