#pragma once

// gpureduce-bench --suite dtypes: the stats kernel (kernels::cuda::ReduceStatsInto) over every
// dtype beside CUB DeviceReduce on the same bytes, and float32 single_pass SUM (the reference
// every fraction is of), at payloads of a given number of bytes.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdio>
#include <vector>

#include "kernels/bench/measure.h"
#include "kernels/bench/report.h"

namespace gpureduce::bench {

// Measures every case at each payload size (bytes) and prints a Markdown table per size to
// `out`; appends the rows (row.n in elements, row.bytes in bytes) to *rows.
void RunDtypesSuite(const Context& context, const std::vector<size_t>& payload_bytes, int warmup,
                    int runs, cudaStream_t stream, FILE* out, std::vector<Row>* rows);

}  // namespace gpureduce::bench
