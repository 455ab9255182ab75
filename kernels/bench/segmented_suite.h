#pragma once

// gpureduce-bench --suite segmented (issue 23): the segmented SUM kernels over segments of every
// length and the strided (column) SUM over tables of several widths, beside CUB's
// DeviceSegmentedReduce (and DeviceReduce per segment, where there are few) and the production
// full reduction over the same bytes, in the same run. Every output is checked exactly: the
// inputs are multiples of 2^-23 whose float64 sums are exact, so each output must be the float32
// rounding of the exact sum.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdio>
#include <vector>

#include "kernels/bench/measure.h"
#include "kernels/bench/report.h"

namespace gpureduce::bench {

// Measures every layout over `bytes` of float32 and prints Markdown tables and the goals' verdict
// to `out`; appends the rows to *rows.
void RunSegmentedSuite(const Context& context, size_t bytes, int warmup, int runs,
                       cudaStream_t stream, FILE* out, std::vector<Row>* rows);

}  // namespace gpureduce::bench
