#include "runtime/cpu/pieces_block_source.h"

#include <algorithm>
#include <memory>
#include <vector>

namespace gpureduce::runtime {

kernels::cpu::BlockSource PiecesBlockSource(PayloadPieces pieces) {
  // Shared, so that copies of the source (std::function copies) do not copy the piece list.
  auto shared = std::make_shared<const PayloadPieces>(std::move(pieces));
  return [shared](uint64_t begin, size_t size) -> absl::StatusOr<std::span<const std::byte>> {
    thread_local std::vector<uint64_t> buffer;  // words: aligned for every element size
    const size_t bytes = size * shared->element_bytes();
    const size_t words = (bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t);
    if (buffer.size() < words) buffer.resize(std::max(words, kernels::cpu::kMostTaskBytes / 8));
    std::byte* out = reinterpret_cast<std::byte*>(buffer.data());
    shared->CopyElements(begin, size, out);
    return std::span<const std::byte>(out, bytes);
  };
}

}  // namespace gpureduce::runtime
