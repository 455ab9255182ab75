#include "server/shared_memory/region.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/shared_memory/region_names.h"

namespace gpureduce::server {
namespace {

absl::Status OpenError(const std::string& key, int error) {
  const std::string what = absl::StrCat("shm_open(\"", key, "\") failed: ", std::strerror(error));
  switch (error) {
    case ENOENT:
      return absl::NotFoundError(
          absl::StrCat(what, "; no shared-memory object has that name on the server's host"));
    case EACCES:
      return absl::PermissionDeniedError(
          absl::StrCat(what, "; the server's user may not read it (check its mode and owner)"));
    case ELOOP:
      return absl::InvalidArgumentError(
          absl::StrCat(what, "; it is a symbolic link, and links are refused"));
    case EMFILE:
    case ENFILE:
      return absl::ResourceExhaustedError(
          absl::StrCat(what, "; the server has too many open files"));
    case ENAMETOOLONG:
    case EINVAL:
      return absl::InvalidArgumentError(what);
    default:
      return absl::InternalError(what);
  }
}

// Whole elements of the smallest dtype (float16, bfloat16): a region may hold an odd number of
// them (a CUDA allocation of 31 float16s is 62 bytes). Each request is checked for its own dtype
// (ResolveSharedMemoryRef).
absl::Status CheckAligned(const RegionInfo& info) {
  constexpr uint64_t kSmallestElement = 2;
  if (info.offset % kSmallestElement != 0 || info.byte_size % kSmallestElement != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "offset (", info.offset, ") and byte_size (", info.byte_size,
        ") must be multiples of 2, the size of the smallest element (float16, bfloat16)"));
  }
  if (info.byte_size == 0) return absl::InvalidArgumentError("byte_size must not be 0");
  return absl::OkStatus();
}

double MicrosSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

absl::StatusOr<std::shared_ptr<Region>> Region::OpenSystem(RegionInfo info,
                                                           runtime::Backend& backend) {
  const auto start = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(CheckObjectKey(info.key));
  RETURN_IF_ERROR(CheckAligned(info));
  std::shared_ptr<Region> region(new Region(std::move(info)));
  RegionInfo& in = region->info_;
  in.kind = RegionInfo::Kind::kSystem;
  in.device_id = -1;
  // glibc's shm_open adds O_NOFOLLOW and O_CLOEXEC: a symbolic link in /dev/shm is refused.
  // O_NONBLOCK: opening a FIFO someone made there returns at once (and is refused below)
  // instead of holding this thread until a writer comes; it changes nothing for a file.
  region->fd_ = shm_open(in.key.c_str(), (in.writable ? O_RDWR : O_RDONLY) | O_NONBLOCK, 0);
  if (region->fd_ < 0) return OpenError(in.key, errno);
  struct stat object {};
  if (fstat(region->fd_, &object) != 0) {
    return absl::InternalError(
        absl::StrCat("fstat of \"", in.key, "\" failed: ", std::strerror(errno)));
  }
  if (!S_ISREG(object.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", in.key, "\" is not a regular shared-memory object"));
  }
  const uint64_t object_bytes = static_cast<uint64_t>(object.st_size);
  if (in.offset > object_bytes || in.byte_size > object_bytes - in.offset) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the region (offset ", in.offset, ", byte_size ", in.byte_size, ") ends past the end of \"",
        in.key, "\", which holds ", object_bytes, " bytes"));
  }
  // Map whole pages around the region: the mapping starts on a page, and the region's last
  // page exists in the object (the size was just checked), so pinning it cannot fault.
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t first_page = in.offset / page * page;
  const uint64_t end = (in.offset + in.byte_size + page - 1) / page * page;
  region->mapping_bytes_ = static_cast<size_t>(end - first_page);
  void* mapping = mmap(nullptr, region->mapping_bytes_, PROT_READ, MAP_SHARED, region->fd_,
                       static_cast<off_t>(first_page));
  if (mapping == MAP_FAILED) {
    const int error = errno;
    return absl::Status(
        error == ENOMEM ? absl::StatusCode::kResourceExhausted : absl::StatusCode::kInternal,
        absl::StrCat("mapping ", region->mapping_bytes_, " bytes of \"", in.key,
                     "\" failed: ", std::strerror(error)));
  }
  region->mapping_ = mapping;
  ASSIGN_OR_RETURN(region->hold_, backend.PinHost(mapping, region->mapping_bytes_));
  region->data_ = static_cast<const std::byte*>(mapping) + (in.offset - first_page);
  if (region->hold_ == nullptr) {  // nothing pinned: the CPU reads through the descriptor only
    munmap(region->mapping_, region->mapping_bytes_);
    region->mapping_ = nullptr;
    region->data_ = nullptr;
  }
  in.register_us = MicrosSince(start);
  return region;
}

absl::StatusOr<std::shared_ptr<Region>> Region::OpenCuda(RegionInfo info,
                                                         std::span<const std::byte> handle,
                                                         runtime::Backend& backend) {
  const auto start = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(CheckAligned(info));
  if (info.device_id < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("device_id ", info.device_id, " is not a CUDA device ordinal"));
  }
  std::shared_ptr<Region> region(new Region(std::move(info)));
  RegionInfo& in = region->info_;
  in.kind = RegionInfo::Kind::kCuda;
  in.key.clear();
  ASSIGN_OR_RETURN(runtime::OpenedDeviceMemory opened, backend.OpenIpcHandle(handle, in.device_id));
  region->hold_ = std::move(opened.hold);
  if (in.offset > opened.bytes || in.byte_size > opened.bytes - in.offset) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the region (offset ", in.offset, ", byte_size ", in.byte_size,
        ") ends past the end of the device allocation, which holds ", opened.bytes, " bytes"));
  }
  region->data_ = opened.data + in.offset;
  in.register_us = MicrosSince(start);
  return region;
}

Region::~Region() {
  hold_.reset();  // unpin or close before the pages go
  if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
  if (fd_ >= 0) close(fd_);
}

runtime::SharedSource Region::Source(uint64_t offset, uint64_t byte_size,
                                     size_t element_bytes) const {
  runtime::SharedSource source;
  source.count = byte_size / element_bytes;
  source.element_bytes = element_bytes;
  const std::byte* first = data_ == nullptr ? nullptr : data_ + offset;
  if (info_.kind == RegionInfo::Kind::kCuda) {
    source.kind = runtime::SharedSource::Kind::kDevice;
    source.device_data = first;
    source.device = info_.device_id;
  } else {
    source.kind = runtime::SharedSource::Kind::kHost;
    source.fd = fd_;
    source.file_offset = info_.offset + offset;
    source.pinned = first;
  }
  return source;
}

absl::Status Region::Write(uint64_t offset, std::span<const std::byte> bytes) const {
  if (!info_.writable || fd_ < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("region \"", info_.name, "\" was not registered writable"));
  }
  uint64_t done = 0;
  while (done < bytes.size()) {
    const ssize_t wrote = pwrite(fd_, bytes.data() + done, bytes.size() - done,
                                 static_cast<off_t>(info_.offset + offset + done));
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) {
      return absl::InternalError(
          absl::StrCat("writing ", bytes.size(), " bytes of results into \"", info_.key,
                       "\" failed: ", wrote < 0 ? std::strerror(errno) : "no progress"));
    }
    done += static_cast<uint64_t>(wrote);
  }
  return absl::OkStatus();
}

Region::Use::Use(std::shared_ptr<const Region> region) : region_(std::move(region)) {
  region_->in_flight_.fetch_add(1, std::memory_order_relaxed);
}

Region::Use::~Use() { region_->in_flight_.fetch_sub(1, std::memory_order_relaxed); }

}  // namespace gpureduce::server
