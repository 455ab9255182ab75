#include "tests/fuzz/fuzz_support.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace gpureduce::fuzzing {
namespace {

bool WriteAll(int fd, absl::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

void Fail(absl::string_view what) {
  std::fprintf(stderr, "FUZZ FAILURE: %.*s\n", static_cast<int>(what.size()), what.data());
  std::fflush(stderr);
  std::abort();
}

void CheckCode(const absl::Status& status, std::initializer_list<absl::StatusCode> allowed,
               absl::string_view where) {
  if (status.ok()) return;
  if (std::find(allowed.begin(), allowed.end(), status.code()) != allowed.end()) return;
  Fail(absl::StrCat(where, " returned an undocumented error: ", status.ToString()));
}

bool SameBits(float a, float b) { return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); }

std::unique_ptr<client::ByteReader> MemoryReader(absl::string_view bytes, ReaderKind kind,
                                                 size_t buffer_size) {
  if (kind == ReaderKind::kFile) {
    const int fd = ::memfd_create("fuzz-input", MFD_CLOEXEC);
    if (fd < 0) Fail("memfd_create failed");
    if (!WriteAll(fd, bytes) || ::lseek(fd, 0, SEEK_SET) != 0) Fail("cannot fill the memfd");
    return client::ByteReader::FromDescriptor(fd, "<fuzz file>", /*take_ownership=*/true,
                                              buffer_size);
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) Fail("pipe2 failed");
  // The whole input goes in before reading starts: no writer thread, no blocking.
  const int capacity = ::fcntl(fds[1], F_GETPIPE_SZ);
  if (capacity < 0 || bytes.size() > static_cast<size_t>(capacity)) {
    ::close(fds[0]);
    ::close(fds[1]);
    return nullptr;
  }
  if (!WriteAll(fds[1], bytes)) Fail("cannot fill the pipe");
  ::close(fds[1]);
  return client::ByteReader::FromDescriptor(fds[0], "<fuzz pipe>", /*take_ownership=*/true,
                                            buffer_size);
}

}  // namespace gpureduce::fuzzing
