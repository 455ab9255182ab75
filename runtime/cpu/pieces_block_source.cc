#include "runtime/cpu/pieces_block_source.h"

#include <algorithm>
#include <memory>
#include <vector>

namespace gpureduce::runtime {

kernels::cpu::BlockSource PiecesBlockSource(FloatPieces pieces) {
  // Shared, so that copies of the source (std::function copies) do not copy the piece list.
  auto shared = std::make_shared<const FloatPieces>(std::move(pieces));
  return [shared](uint64_t begin, size_t size) -> absl::StatusOr<std::span<const float>> {
    thread_local std::vector<float> buffer;
    if (buffer.size() < size) buffer.resize(std::max(size, kernels::cpu::kElementsPerTask));
    shared->CopyFloats(begin, size, buffer.data());
    return std::span<const float>(buffer.data(), size);
  };
}

}  // namespace gpureduce::runtime
