#pragma once

// The elements of one message where the transport left them: byte ranges (gRPC's slices) whose
// concatenation is the little-endian elements of the request's dtype (element_bytes() each). A
// range may start at any address and an element may straddle two ranges, so readers copy
// (CopyElements) unless the whole payload is one aligned range (AsBytes, AsSpan). Holds pointers
// only: the bytes must outlive every use, as a Consume's data must (runtime/backend.h). Part of
// the runtime's public API.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace gpureduce::runtime {

class PayloadPieces {
 public:
  PayloadPieces() = default;
  // One aligned range of floats: `data` as it is.
  explicit PayloadPieces(std::span<const float> data);

  // Appends `bytes` bytes at `data`; empty ranges are dropped.
  void Append(const std::byte* data, size_t bytes);
  void Clear();

  // The size of one element (4, float32's, unless set): the unit of count() and of Elements().
  size_t element_bytes() const { return element_bytes_; }
  void set_element_bytes(size_t bytes) { element_bytes_ = bytes; }

  uint64_t bytes() const { return bytes_; }
  // Whole elements; a byte count that is not a multiple of the element size is the caller's to
  // refuse (or to complete with the next message's bytes).
  uint64_t count() const { return bytes_ / element_bytes_; }
  bool empty() const { return bytes_ == 0; }
  size_t pieces() const { return pieces_.size(); }
  // The bytes of range `i` (of pieces()).
  std::span<const std::byte> Piece(size_t i) const { return {pieces_[i].data, pieces_[i].bytes}; }

  // Elements [first, first + count) as pieces of their own (count() must cover them).
  PayloadPieces Elements(uint64_t first, uint64_t count) const;

  // The elements in place, when they are one range at an address aligned to the element size.
  std::optional<std::span<const std::byte>> AsBytes() const;
  // The same as floats, for float32 payloads.
  std::optional<std::span<const float>> AsSpan() const;

  // Copies elements [first, first + count) to `out` (count() must cover them).
  void CopyElements(uint64_t first, size_t count, std::byte* out) const {
    CopyBytes(first * element_bytes_, count * element_bytes_, out);
  }
  void CopyFloats(uint64_t first, size_t count, float* out) const {
    CopyElements(first, count, reinterpret_cast<std::byte*>(out));
  }
  // Copies bytes [first, first + bytes) to `out` (bytes() must cover them).
  void CopyBytes(uint64_t first, size_t bytes, std::byte* out) const;

 private:
  struct Range {
    const std::byte* data;
    size_t bytes;
    uint64_t offset;  // of its first byte in the payload
  };
  std::vector<Range> pieces_;
  uint64_t bytes_ = 0;
  size_t element_bytes_ = sizeof(float);
};

}  // namespace gpureduce::runtime
