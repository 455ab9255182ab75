#include "client/shared_memory/shared_memory_object.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpureduce::client {
namespace {

constexpr int kNameAttempts = 8;  // EEXIST on a fresh 64-bit name is already unheard of
constexpr char kShmDirectory[] = "/dev/shm";

// "4000012 bytes (3.81 MiB)": exact, and readable.
std::string Bytes(uint64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " bytes");
  const char* unit = "KiB";
  double value = bytes / 1024.0;
  for (const char* next : {"MiB", "GiB", "TiB", "PiB", "EiB"}) {
    if (value < 1024) break;
    value /= 1024;
    unit = next;
  }
  return absl::StrFormat("%d bytes (%.3g %s)", bytes, value, unit);
}

// What /dev/shm has free, for the ENOSPC message; "" when it cannot be told.
std::string ShmFreeSpace() {
  struct statvfs fs;
  if (statvfs(kShmDirectory, &fs) != 0) return "";
  const uint64_t free_bytes = uint64_t{fs.f_bavail} * fs.f_frsize;
  const uint64_t total_bytes = uint64_t{fs.f_blocks} * fs.f_frsize;
  return absl::StrCat(kShmDirectory, " has ", Bytes(free_bytes), " free of ", Bytes(total_bytes),
                      "; ");
}

absl::Status CreateError(int error, const std::string& key, uint64_t bytes, const char* step) {
  const std::string what = absl::StrCat(step, " shared-memory object ", key, " of ", Bytes(bytes));
  switch (error) {
    case ENOSPC:
    case EDQUOT:
      return absl::ResourceExhaustedError(absl::StrCat(
          "cannot ", what, ": ", std::strerror(error), " (", ShmFreeSpace(),
          "in a Docker container the default is 64 MiB: raise it with docker run --shm-size, "
          "in Kubernetes mount an emptyDir with medium: Memory at /dev/shm)"));
    case ENOMEM:
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot ", what, ": ", std::strerror(error), " (out of memory)"));
    case EFBIG:
    case EINVAL:
      return absl::InvalidArgumentError(absl::StrCat("cannot ", what, ": ", std::strerror(error),
                                                     " (larger than a file can be)"));
    case ENOSYS:
    case ENOENT:
      return absl::UnimplementedError(
          absl::StrCat("cannot ", what, ": ", std::strerror(error),
                       " (no POSIX shared memory here: is /dev/shm mounted?)"));
    default:
      return absl::ErrnoToStatus(error, absl::StrCat("cannot ", what));
  }
}

}  // namespace

std::string MakeSharedMemoryKey() {
  static thread_local std::mt19937_64 generator([] {
    std::random_device device;
    return (uint64_t{device()} << 32) ^ device();
  }());
  return absl::StrFormat("/gpureduce-%d-%016x", getpid(), generator());
}

absl::StatusOr<SharedMemoryObject> SharedMemoryObject::Create(uint64_t bytes) {
  if (bytes > static_cast<uint64_t>(std::numeric_limits<off_t>::max()) ||
      bytes > std::numeric_limits<size_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot create a shared-memory object of ", Bytes(bytes),
        ": larger than a file can be (at most ", std::numeric_limits<off_t>::max(), " bytes)"));
  }
  std::string key;
  int fd = -1;
  for (int attempt = 0; attempt < kNameAttempts && fd < 0; ++attempt) {
    key = MakeSharedMemoryKey();
    fd = shm_open(key.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) return CreateError(errno, key, bytes, "create");
  }
  if (fd < 0) return CreateError(EEXIST, key, bytes, "create");

  // From here a failure removes the object again.
  auto fail = [&](int error, const char* step) {
    close(fd);
    shm_unlink(key.c_str());
    return CreateError(error, key, bytes, step);
  };
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) return fail(errno, "size");
  if (bytes > 0) {
    int error;
    do {
      error = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
    } while (error == EINTR);
    if (error != 0) return fail(error, "reserve");
  }
  void* data = nullptr;
  if (bytes > 0) {
    data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (data == MAP_FAILED) return fail(errno, "map");
  }
  close(fd);  // the mapping keeps the object open
  return SharedMemoryObject(std::move(key), data, bytes);
}

SharedMemoryObject::SharedMemoryObject(SharedMemoryObject&& other) noexcept
    : key_(std::exchange(other.key_, std::string())),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      linked_(std::exchange(other.linked_, false)) {}

SharedMemoryObject& SharedMemoryObject::operator=(SharedMemoryObject&& other) noexcept {
  if (this != &other) {
    Close().IgnoreError();
    key_ = std::exchange(other.key_, std::string());
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    linked_ = std::exchange(other.linked_, false);
  }
  return *this;
}

absl::Status SharedMemoryObject::Unlink() {
  if (key_.empty() || !linked_) return absl::OkStatus();
  linked_ = false;
  if (shm_unlink(key_.c_str()) != 0 && errno != ENOENT) {
    return absl::ErrnoToStatus(errno, absl::StrCat("cannot unlink shared-memory object ", key_));
  }
  return absl::OkStatus();
}

absl::Status SharedMemoryObject::Close() {
  if (key_.empty()) return absl::OkStatus();
  absl::Status status;
  if (data_ != nullptr && munmap(data_, size_) != 0) {
    status = absl::ErrnoToStatus(errno, absl::StrCat("cannot unmap shared-memory object ", key_));
  }
  if (absl::Status unlinked = Unlink(); !unlinked.ok() && status.ok()) status = unlinked;
  key_.clear();
  data_ = nullptr;
  size_ = 0;
  return status;
}

}  // namespace gpureduce::client
