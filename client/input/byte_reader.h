#pragma once

// Buffered sequential reads from a file or a pipe with POSIX read(): one fixed buffer, never the
// whole input, EINTR retried. Every FloatSource that parses bytes sits on top of one.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace gpureduce::client {

class ByteReader {
 public:
  // 1 MiB: large enough that syscalls are noise, small enough to stay in L2 while parsing.
  static constexpr size_t kDefaultBufferSize = size_t{1} << 20;

  // Opens a regular file (or a FIFO / device). NotFound / PermissionDenied carry the path and
  // strerror; a directory is InvalidArgument.
  static absl::StatusOr<std::unique_ptr<ByteReader>> OpenFile(
      const std::string& path, size_t buffer_size = kDefaultBufferSize);

  // Reads standard input (not closed on destruction); named "<stdin>".
  static std::unique_ptr<ByteReader> FromStdin(size_t buffer_size = kDefaultBufferSize);

  // Reads an already open descriptor, closing it on destruction when `take_ownership`.
  static std::unique_ptr<ByteReader> FromDescriptor(int fd, std::string name, bool take_ownership,
                                                    size_t buffer_size = kDefaultBufferSize);

  ByteReader(const ByteReader&) = delete;
  ByteReader& operator=(const ByteReader&) = delete;
  ~ByteReader();

  // Fills `out` completely unless the input ends first; returns the bytes written.
  absl::StatusOr<size_t> Read(absl::Span<char> out);

  // Consumes `n` bytes without returning them: a seek for a regular file, reads otherwise.
  // Returns the bytes skipped (fewer only at end of input).
  absl::StatusOr<uint64_t> Skip(uint64_t n);

  // Returns up to `n` upcoming bytes without consuming them (fewer only at end of input).
  // `n` must not exceed buffer_size(). The view is valid until the next call.
  absl::StatusOr<absl::string_view> Peek(size_t n);

  // Consumes and returns whatever is buffered, refilling first when the buffer is empty; empty
  // only at end of input. The view is valid until the next call. Lets parsers scan in place.
  absl::StatusOr<absl::string_view> ReadChunk();

  // The path given to OpenFile, or "<stdin>".
  const std::string& name() const { return name_; }
  // Total size in bytes for regular files; std::nullopt for pipes and terminals.
  std::optional<uint64_t> size() const { return size_; }
  // Bytes consumed so far.
  uint64_t position() const { return position_; }
  size_t buffer_size() const { return capacity_; }

 private:
  ByteReader(int fd, std::string name, bool owns_fd, std::optional<uint64_t> size,
             size_t buffer_size);

  // One read() into dst, retried on EINTR; 0 at end of input.
  absl::StatusOr<size_t> ReadSome(char* dst, size_t n);

  int fd_;
  std::string name_;
  bool owns_fd_;
  std::optional<uint64_t> size_;
  size_t capacity_;
  std::unique_ptr<char[]> buffer_;
  size_t begin_ = 0;  // buffer_[begin_, end_) holds read-but-unconsumed bytes.
  size_t end_ = 0;
  bool eof_ = false;
  uint64_t position_ = 0;
};

}  // namespace gpureduce::client
