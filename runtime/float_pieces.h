#pragma once

// The floats of one message where the transport left them: byte ranges (gRPC's slices) whose
// concatenation is little-endian float32. A range may start at any address and a float may
// straddle two ranges, so readers copy (CopyFloats) unless the whole payload is one aligned
// range (AsSpan). Holds pointers only: the bytes must outlive every use, as a Consume's data
// must (runtime/backend.h). Part of the runtime's public API.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace gpureduce::runtime {

class FloatPieces {
 public:
  FloatPieces() = default;
  // One aligned range: `data` as it is.
  explicit FloatPieces(std::span<const float> data);

  // Appends `bytes` bytes at `data`; empty ranges are dropped.
  void Append(const std::byte* data, size_t bytes);
  void Clear();

  uint64_t bytes() const { return bytes_; }
  // Whole floats; a byte count that is not a multiple of 4 is the caller's to refuse.
  uint64_t count() const { return bytes_ / sizeof(float); }
  bool empty() const { return bytes_ == 0; }
  size_t pieces() const { return pieces_.size(); }

  // Floats [first, first + count) as pieces of their own (count() must cover them).
  FloatPieces Floats(uint64_t first, uint64_t count) const;

  // The floats in place, when they are one range at a float-aligned address.
  std::optional<std::span<const float>> AsSpan() const;

  // Copies floats [first, first + count) to `out` (count() must cover them).
  void CopyFloats(uint64_t first, size_t count, float* out) const {
    CopyBytes(first * sizeof(float), count * sizeof(float), reinterpret_cast<std::byte*>(out));
  }
  // Copies bytes [first, first + bytes) to `out` (bytes() must cover them).
  void CopyBytes(uint64_t first, size_t bytes, std::byte* out) const;

 private:
  struct Piece {
    const std::byte* data;
    size_t bytes;
    uint64_t offset;  // of its first byte in the payload
  };
  std::vector<Piece> pieces_;
  uint64_t bytes_ = 0;
};

}  // namespace gpureduce::runtime
