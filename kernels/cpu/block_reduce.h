#pragma once

// The `cpu` kernel's passes over one in-cache block (internal to kernels/cpu; ReduceBlock in
// kernels/reduce.h runs them). A request reads its block once from memory: the first pass
// brings it into L2 (a task's block is at most 512 KiB), the others reread it there. Each pass
// is one loop templated on the dtype and on the accumulations it gathers, so a request pays
// only for what its ops need.

#include <cstddef>
#include <cstdint>

#include "common/reduction/dtype.h"
#include "common/reduction/stats.h"

namespace gpureduce::kernels::cpu {

// Independent accumulators per loop: hides add latency and fills the vector registers.
inline constexpr size_t kLanes = 8;

// The sums: nan_count always (floats), and sum/sum_lo or int_sum/int_sum_wraps, sum_squares,
// and mean/m2 (moments) as `needs` asks. `data` holds `size` elements of `dtype` (float32, float64,
// int32 or int64: ReduceBlock widens float16 and bfloat16 to float32 first).
void AddSums(DType dtype, const StatsNeeds& needs, const std::byte* data, size_t size,
             Stats& stats);

// min/int_min and min_index (if `min`), max likewise: the first occurrence of the extreme among
// the non-NaN elements, indices counted from `base_index`.
void AddExtremes(DType dtype, bool min, bool max, const std::byte* data, size_t size,
                 uint64_t base_index, Stats& stats);

// prod/prod_exponent of the non-NaN elements, or int_prod, int_prod_overflow, int_prod_zero.
void AddProduct(DType dtype, const std::byte* data, size_t size, Stats& stats);

}  // namespace gpureduce::kernels::cpu
