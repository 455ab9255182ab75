#include "runtime/payload_pieces.h"

#include <algorithm>
#include <cstring>

namespace gpureduce::runtime {

PayloadPieces::PayloadPieces(std::span<const float> data) {
  Append(reinterpret_cast<const std::byte*>(data.data()), data.size_bytes());
}

void PayloadPieces::Append(const std::byte* data, size_t bytes) {
  if (bytes == 0) return;
  pieces_.push_back(Range{data, bytes, bytes_});
  bytes_ += bytes;
}

void PayloadPieces::Clear() {
  pieces_.clear();
  bytes_ = 0;
}

std::optional<std::span<const std::byte>> PayloadPieces::AsBytes() const {
  if (pieces_.empty()) return std::span<const std::byte>();
  if (pieces_.size() != 1 || pieces_[0].bytes % element_bytes_ != 0 ||
      reinterpret_cast<uintptr_t>(pieces_[0].data) % element_bytes_ != 0) {
    return std::nullopt;
  }
  return std::span<const std::byte>(pieces_[0].data, pieces_[0].bytes);
}

std::optional<std::span<const float>> PayloadPieces::AsSpan() const {
  if (element_bytes_ != sizeof(float)) return std::nullopt;
  const std::optional<std::span<const std::byte>> bytes = AsBytes();
  if (!bytes.has_value()) return std::nullopt;
  return std::span<const float>(reinterpret_cast<const float*>(bytes->data()),
                                bytes->size() / sizeof(float));
}

PayloadPieces PayloadPieces::Elements(uint64_t first, uint64_t count) const {
  PayloadPieces out;
  out.element_bytes_ = element_bytes_;
  const uint64_t begin = first * element_bytes_, end = (first + count) * element_bytes_;
  for (const Range& piece : pieces_) {
    const uint64_t from = std::max(begin, piece.offset);
    const uint64_t to = std::min(end, piece.offset + piece.bytes);
    if (from < to) out.Append(piece.data + (from - piece.offset), static_cast<size_t>(to - from));
  }
  return out;
}

void PayloadPieces::CopyBytes(uint64_t first, size_t bytes, std::byte* out) const {
  if (bytes == 0) return;
  uint64_t at = first;
  size_t left = bytes;
  std::byte* to = out;
  // The last piece that starts at or before `at`.
  auto piece = std::upper_bound(pieces_.begin(), pieces_.end(), at,
                                [](uint64_t offset, const Range& p) { return offset < p.offset; });
  --piece;
  while (left > 0) {
    const size_t skip = static_cast<size_t>(at - piece->offset);
    const size_t take = std::min(left, piece->bytes - skip);
    std::memcpy(to, piece->data + skip, take);
    to += take;
    at += take;
    left -= take;
    ++piece;
  }
}

}  // namespace gpureduce::runtime
