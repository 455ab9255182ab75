#include "server/element_carry.h"

#include <algorithm>
#include <cstring>

namespace gpureduce::server {

runtime::PayloadPieces ElementCarry::Take(const runtime::PayloadPieces& chunk, int buffer) {
  runtime::PayloadPieces out;
  out.set_element_bytes(element_bytes_);
  uint64_t from = 0;  // the chunk's first byte not yet placed
  if (held_ > 0) {
    // Complete the held element with the chunk's first bytes, in a head buffer of its own.
    std::array<std::byte, 8>& head = heads_[buffer];
    const size_t need = element_bytes_ - held_;
    const size_t take = static_cast<size_t>(std::min<uint64_t>(need, chunk.bytes()));
    std::memcpy(head.data(), held_bytes_.data(), held_);
    chunk.CopyBytes(0, take, head.data() + held_);
    from = take;
    if (take < need) {  // still incomplete: all of it waits for the next chunk
      std::memcpy(held_bytes_.data(), head.data(), held_ + take);
      held_ += take;
      return out;
    }
    out.Append(head.data(), element_bytes_);
    held_ = 0;
  }
  const uint64_t rest = chunk.bytes() - from;
  const uint64_t whole = rest / element_bytes_ * element_bytes_;
  runtime::PayloadPieces bytes = chunk;
  bytes.set_element_bytes(1);
  const runtime::PayloadPieces body = bytes.Elements(from, whole);
  for (size_t i = 0; i < body.pieces(); ++i) {
    const std::span<const std::byte> piece = body.Piece(i);
    out.Append(piece.data(), piece.size());
  }
  held_ = static_cast<size_t>(rest - whole);
  chunk.CopyBytes(from + whole, held_, held_bytes_.data());
  return out;
}

}  // namespace gpureduce::server
