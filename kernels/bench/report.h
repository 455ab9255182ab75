#pragma once

// gpureduce-bench's output: a Markdown table per size (default), CSV, or one JSON document with
// the run's context and every row, which scripts/plot_bench.py turns into plots.

#include <string>
#include <vector>

#include "kernels/bench/measure.h"
#include "kernels/gpu_traits.h"

namespace gpureduce::bench {

struct Context {
  std::string device;
  int sms = 0;
  kernels::GpuTraits gpu;  // what the kernels' dispatch is given
  size_t l2_bytes = 0;
  double peak_gbps = 0;     // memory clock x bus width
  double ceiling_gbps = 0;  // the plain read kernel's best, measured in this run
  std::string suite;
  int runs = 0;
  int warmup = 0;
  std::string commit;
  std::string date;
};

// What a row's numbers mean next to the others of its size.
struct Derived {
  double median_us = 0, min_us = 0, max_us = 0, call_us = 0;
  double gbps = 0, pct_peak = 0, pct_ceiling = 0;
  double vs_cub = 0;      // CUB's median for the same op and size over this one (0: none)
  double step = 0;        // ladder: previous variant's median over this one
  double cumulative = 0;  // ladder: first variant's median over this one
};

// `rows` of one size, in the order measured; step and cumulative run down the ladder variants.
std::vector<Derived> Derive(const Context& context, const std::vector<Row>& rows);

std::string MarkdownTable(const Context& context, const std::vector<Row>& rows);
std::string CsvHeader();
std::string CsvRows(const Context& context, const std::vector<Row>& rows);
// The whole run: `rows` of every size.
std::string Json(const Context& context, const std::vector<Row>& rows);

}  // namespace gpureduce::bench
