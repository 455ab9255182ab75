#include "client/input/byte_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace gpureduce::client {

absl::StatusOr<std::unique_ptr<ByteReader>> ByteReader::OpenFile(const std::string& path,
                                                                 size_t buffer_size) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("cannot open ", path));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    return absl::ErrnoToStatus(error, absl::StrCat("cannot stat ", path));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is a directory; expected a file of float32 values"));
  }
  std::optional<uint64_t> size;
  if (S_ISREG(st.st_mode)) {
    size = static_cast<uint64_t>(st.st_size);
    // Advisory only: a larger kernel readahead window for one front-to-back pass.
    (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  }
  return std::unique_ptr<ByteReader>(new ByteReader(fd, path, /*owns_fd=*/true, size, buffer_size));
}

std::unique_ptr<ByteReader> ByteReader::FromStdin(size_t buffer_size) {
  return FromDescriptor(STDIN_FILENO, "<stdin>", /*take_ownership=*/false, buffer_size);
}

std::unique_ptr<ByteReader> ByteReader::FromDescriptor(int fd, std::string name,
                                                       bool take_ownership, size_t buffer_size) {
  std::optional<uint64_t> size;
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    // A redirected regular file (`< data.bin`) may already be partly consumed.
    const off_t offset = ::lseek(fd, 0, SEEK_CUR);
    if (offset >= 0 && offset <= st.st_size) size = static_cast<uint64_t>(st.st_size - offset);
  }
  return std::unique_ptr<ByteReader>(
      new ByteReader(fd, std::move(name), take_ownership, size, buffer_size));
}

ByteReader::ByteReader(int fd, std::string name, bool owns_fd, std::optional<uint64_t> size,
                       size_t buffer_size)
    : fd_(fd),
      name_(std::move(name)),
      owns_fd_(owns_fd),
      size_(size),
      capacity_(std::max<size_t>(buffer_size, 16)),
      buffer_(std::make_unique_for_overwrite<char[]>(capacity_)) {}

ByteReader::~ByteReader() {
  // Read-only descriptor: close() cannot lose data, so its result is not interesting.
  if (owns_fd_) ::close(fd_);
}

absl::StatusOr<size_t> ByteReader::ReadSome(char* dst, size_t n) {
  if (eof_ || n == 0) return 0;
  // Linux transfers at most 0x7ffff000 bytes per read(); asking for more is harmless.
  ssize_t got;
  do {
    got = ::read(fd_, dst, n);
  } while (got < 0 && errno == EINTR);
  if (got < 0) return absl::ErrnoToStatus(errno, absl::StrCat("cannot read ", name_));
  // Remember end of input: a terminal would block again on the next read().
  if (got == 0) eof_ = true;
  return static_cast<size_t>(got);
}

absl::StatusOr<size_t> ByteReader::Read(absl::Span<char> out) {
  size_t done = 0;
  while (done < out.size()) {
    if (begin_ < end_) {
      const size_t n = std::min(end_ - begin_, out.size() - done);
      std::memcpy(out.data() + done, buffer_.get() + begin_, n);
      begin_ += n;
      done += n;
      continue;
    }
    absl::StatusOr<size_t> got = 0;
    if (out.size() - done >= capacity_) {
      // Large requests bypass the buffer: one copy fewer.
      got = ReadSome(out.data() + done, out.size() - done);
      if (got.ok()) done += *got;
    } else {
      got = ReadSome(buffer_.get(), capacity_);
      if (got.ok()) {
        begin_ = 0;
        end_ = *got;
      }
    }
    if (!got.ok()) return got.status();
    if (*got == 0) break;
  }
  position_ += done;
  return done;
}

absl::StatusOr<uint64_t> ByteReader::Skip(uint64_t n) {
  const uint64_t buffered = std::min<uint64_t>(end_ - begin_, n);
  begin_ += buffered;
  uint64_t done = buffered;
  if (done < n && size_.has_value() && !eof_) {
    // A regular file: seek past the rest, as far as the file goes.
    const uint64_t left = *size_ > position_ + done ? *size_ - position_ - done : 0;
    const uint64_t jump = std::min(n - done, left);
    if (::lseek(fd_, static_cast<off_t>(jump), SEEK_CUR) < 0) {
      return absl::ErrnoToStatus(errno, absl::StrCat("cannot seek in ", name_));
    }
    done += jump;
  }
  while (done < n) {  // a pipe: read and drop
    absl::StatusOr<size_t> got = ReadSome(buffer_.get(), std::min<uint64_t>(capacity_, n - done));
    if (!got.ok()) return got.status();
    if (*got == 0) break;
    done += *got;
  }
  position_ += done;
  return done;
}

absl::StatusOr<absl::string_view> ByteReader::Peek(size_t n) {
  n = std::min(n, capacity_);
  if (end_ - begin_ < n && begin_ > 0) {
    std::memmove(buffer_.get(), buffer_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  while (end_ - begin_ < n) {
    absl::StatusOr<size_t> got = ReadSome(buffer_.get() + end_, capacity_ - end_);
    if (!got.ok()) return got.status();
    if (*got == 0) break;
    end_ += *got;
  }
  return absl::string_view(buffer_.get() + begin_, std::min(n, end_ - begin_));
}

absl::StatusOr<absl::string_view> ByteReader::ReadChunk() {
  if (begin_ == end_) {
    absl::StatusOr<size_t> got = ReadSome(buffer_.get(), capacity_);
    if (!got.ok()) return got.status();
    begin_ = 0;
    end_ = *got;
  }
  const absl::string_view chunk(buffer_.get() + begin_, end_ - begin_);
  position_ += chunk.size();
  begin_ = end_;
  return chunk;
}

}  // namespace gpureduce::client
