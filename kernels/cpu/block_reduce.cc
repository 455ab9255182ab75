// ReduceBlock (kernels/reduce.h): the passes of block_reduce.h that a request's needs call for,
// over one block.

#include "kernels/cpu/block_reduce.h"

#include <algorithm>
#include <vector>

#include "kernels/cpu/element_load.h"
#include "kernels/reduce.h"

namespace gpureduce::kernels::cpu {
namespace {

// float16 and bfloat16 blocks are widened to float32 once, in one loop that does nothing else
// (which vectorizes; inside the passes' loops the conversion did not), then reduced as float32:
// every float32 value is exact, and the passes run from L2 either way.
template <DType kDType>
std::span<const std::byte> Widen(std::span<const std::byte> bytes, size_t size) {
  thread_local std::vector<float> widened;
  widened.resize(size);
  const auto* in = reinterpret_cast<const uint16_t*>(bytes.data());
  float* out = widened.data();
  for (size_t i = 0; i < size; ++i) out[i] = Element<kDType>::Load(in[i]);
  return std::as_bytes(std::span<const float>(widened));
}

// The first NaN's offset in the block (called only when it holds one).
int64_t FirstNan(DType dtype, const std::byte* data, size_t size) {
  return DispatchPassDType(dtype, [&]<DType kDType>() -> int64_t {
    using E = Element<kDType>;
    const auto* elements = reinterpret_cast<const typename E::Storage*>(data);
    for (size_t i = 0; i < size; ++i) {
      if (!(E::Load(elements[i]) == E::Load(elements[i]))) return static_cast<int64_t>(i);
    }
    return -1;
  });
}

}  // namespace

Stats ReduceBlock(const StatsRequest& request, std::span<const std::byte> bytes,
                  uint64_t base_index) {
  const size_t size = bytes.size() / DTypeSize(request.dtype);
  if (request.dtype == DType::kFloat16 || request.dtype == DType::kBFloat16) {
    // In tiles of a task's block, so the widened copy stays in L2 (ReduceAsync's blocks are one
    // tile; a caller's larger block merges its tiles in order).
    Stats stats;
    for (size_t begin = 0; begin < size; begin += kElementsPerTask) {
      const size_t tile = std::min(kElementsPerTask, size - begin);
      const std::span<const std::byte> part = bytes.subspan(begin * 2, tile * 2);
      const std::span<const std::byte> widened = request.dtype == DType::kFloat16
                                                     ? Widen<DType::kFloat16>(part, tile)
                                                     : Widen<DType::kBFloat16>(part, tile);
      stats = MergeStats(
          stats, ReduceBlock({DType::kFloat32, request.needs}, widened, base_index + begin));
    }
    return stats;
  }
  const DType dtype = request.dtype;
  const StatsNeeds& needs = request.needs;
  const std::byte* data = bytes.data();
  Stats stats;
  stats.count = size;
  stats.integer = IsInteger(dtype);
  if (size == 0) return stats;

  // The sums pass also counts a float block's NaNs, so it runs for every float request.
  if (!stats.integer || needs.sum || needs.sum_squares || needs.moments) {
    AddSums(dtype, needs, data, size, stats);
  }
  if (stats.nan_count > 0) {
    stats.first_nan = static_cast<int64_t>(base_index) + FirstNan(dtype, data, size);
  }
  AddExtremes(dtype, needs.min, needs.max, data, size, base_index, stats);
  if (needs.prod) AddProduct(dtype, data, size, stats);
  return stats;
}

}  // namespace gpureduce::kernels::cpu
