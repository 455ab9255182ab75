#include "runtime/cpu/file_block_source.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace gpureduce::runtime {
namespace {

absl::Status ShortRead(int fd, uint64_t from, uint64_t to) {
  struct stat info {};
  const std::string size =
      fstat(fd, &info) == 0 ? absl::StrCat(info.st_size, " bytes") : "an unknown size";
  return absl::FailedPreconditionError(
      absl::StrCat("the shared-memory object ends before byte ", to, " (it holds ", size,
                   " now): its owner truncated it after registration; bytes ", from, " to ", to,
                   " were not read. Register it again at its new size"));
}

}  // namespace

kernels::cpu::BlockSource FileBlockSource(int fd, uint64_t file_offset, size_t element_bytes) {
  return [fd, file_offset, element_bytes](
             uint64_t begin, size_t size) -> absl::StatusOr<std::span<const std::byte>> {
    thread_local std::vector<uint64_t> buffer;  // words: aligned for every element size
    const size_t bytes = size * element_bytes;
    const size_t words = (bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t);
    if (buffer.size() < words) buffer.resize(std::max(words, kernels::cpu::kMostTaskBytes / 8));
    char* out = reinterpret_cast<char*>(buffer.data());
    if (absl::Status status = ReadFileBytes(fd, file_offset + begin * element_bytes, bytes, out);
        !status.ok()) {
      return status;
    }
    return std::span<const std::byte>(reinterpret_cast<const std::byte*>(out), bytes);
  };
}

absl::Status ReadFileBytes(int fd, uint64_t from, size_t bytes, char* out) {
  size_t done = 0;
  while (done < bytes) {
    const ssize_t got = pread(fd, out + done, bytes - done, static_cast<off_t>(from + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      return absl::InternalError(absl::StrCat("reading the shared-memory object at byte ",
                                              from + done, ": ", std::strerror(errno)));
    }
    if (got == 0) return ShortRead(fd, from, from + bytes);
    done += static_cast<size_t>(got);
  }
  return absl::OkStatus();
}

}  // namespace gpureduce::runtime
