#include "kernels/bench/report.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "kernels/cuda/ladder/ladder_policy.h"

namespace gpureduce::bench {
namespace {

bool IsLadder(const std::string& kernel) {
  for (const kernels::LadderPolicy& policy : kernels::kLadder) {
    if (kernel == policy.name) return true;
  }
  return false;
}

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string JsonNumbers(const std::vector<double>& values) {
  return absl::StrCat(
      "[",
      absl::StrJoin(values, ",",
                    [](std::string* out, double v) { absl::StrAppendFormat(out, "%.3f", v); }),
      "]");
}

}  // namespace

std::vector<Derived> Derive(const Context& context, const std::vector<Row>& rows) {
  std::map<std::pair<size_t, std::string>, double> cub;  // (n, op) -> median
  for (const Row& row : rows) {
    if (row.kernel == "cub") cub[{row.n, row.op}] = Median(row.kernel_us);
  }
  std::vector<Derived> out;
  double first = 0, previous = 0;
  for (const Row& row : rows) {
    Derived d;
    d.median_us = Median(row.kernel_us);
    d.min_us = *std::min_element(row.kernel_us.begin(), row.kernel_us.end());
    d.max_us = *std::max_element(row.kernel_us.begin(), row.kernel_us.end());
    d.call_us = Median(row.call_us);
    d.gbps = row.bytes / (d.median_us * 1e3);
    d.pct_peak = 100 * d.gbps / context.peak_gbps;
    d.pct_ceiling = context.ceiling_gbps > 0 ? 100 * d.gbps / context.ceiling_gbps : 0;
    if (auto it = cub.find({row.n, row.op}); it != cub.end()) d.vs_cub = it->second / d.median_us;
    if (IsLadder(row.kernel)) {
      if (first == 0) first = previous = d.median_us;
      d.step = previous / d.median_us;
      d.cumulative = first / d.median_us;
      previous = d.median_us;
    }
    out.push_back(d);
  }
  return out;
}

std::string MarkdownTable(const Context& context, const std::vector<Row>& rows) {
  const std::vector<Derived> derived = Derive(context, rows);
  const bool ladder =
      std::any_of(rows.begin(), rows.end(), [](const Row& row) { return IsLadder(row.kernel); });
  std::string out = absl::StrFormat(
      "## n = %d (%.1f MB)\n\n| kernel | op | median us | min | max | GB/s | %% of peak "
      "| %% of ceiling |%s x CUB | call us | wrong |\n|---|---|---:|---:|---:|---:|---:|---:|%s"
      "---:|---:|---:|\n",
      rows.front().n, rows.front().bytes / 1e6, ladder ? " step | cumulative |" : "",
      ladder ? "---:|---:|" : "");
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    const Derived& d = derived[i];
    const std::string name = row.note.empty() ? row.kernel : row.kernel + " (" + row.note + ")";
    const std::string ladder_cells = !ladder ? ""
                                     : d.step > 0
                                         ? absl::StrFormat(" %.2f | %.1f |", d.step, d.cumulative)
                                         : " | |";
    absl::StrAppendFormat(
        &out, "| %s | %s | %.1f | %.1f | %.1f | %.0f | %.1f | %.1f |%s %s | %.1f | %d |\n", name,
        row.op, d.median_us, d.min_us, d.max_us, d.gbps, d.pct_peak, d.pct_ceiling, ladder_cells,
        d.vs_cub > 0 ? absl::StrFormat("%.3f", d.vs_cub) : "", d.call_us, row.wrong);
  }
  return out + "\n";
}

std::string CsvHeader() {
  return "n,kernel,op,note,median_us,min_us,max_us,gbps,pct_peak,pct_ceiling,vs_cub,step,"
         "cumulative,call_us,wrong\n";
}

std::string CsvRows(const Context& context, const std::vector<Row>& rows) {
  const std::vector<Derived> derived = Derive(context, rows);
  std::string out;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    const Derived& d = derived[i];
    absl::StrAppendFormat(
        &out, "%d,%s,%s,%s,%.3f,%.3f,%.3f,%.1f,%.2f,%.2f,%.4f,%.3f,%.3f,%.2f,%d\n", row.n,
        row.kernel, row.op, row.note, d.median_us, d.min_us, d.max_us, d.gbps, d.pct_peak,
        d.pct_ceiling, d.vs_cub, d.step, d.cumulative, d.call_us, row.wrong);
  }
  return out;
}

std::string Json(const Context& context, const std::vector<Row>& rows) {
  std::string out = absl::StrFormat(
      "{\n  \"device\": %s,\n  \"multiprocessors\": %d,\n  \"l2_bytes\": %d,\n"
      "  \"peak_gbps\": %.1f,\n  \"read_ceiling_gbps\": %.1f,\n  \"suite\": %s,\n"
      "  \"runs\": %d,\n  \"warmup\": %d,\n  \"commit\": %s,\n  \"date\": %s,\n  \"rows\": [\n",
      JsonString(context.device), context.sms, context.l2_bytes, context.peak_gbps,
      context.ceiling_gbps, JsonString(context.suite), context.runs, context.warmup,
      JsonString(context.commit), JsonString(context.date));
  // Derive per size, as the tables do.
  std::vector<std::string> items;
  for (size_t begin = 0; begin < rows.size();) {
    size_t end = begin;
    while (end < rows.size() && rows[end].n == rows[begin].n) ++end;
    const std::vector<Row> size_rows(rows.begin() + begin, rows.begin() + end);
    const std::vector<Derived> derived = Derive(context, size_rows);
    for (size_t i = 0; i < size_rows.size(); ++i) {
      const Row& row = size_rows[i];
      const Derived& d = derived[i];
      items.push_back(absl::StrFormat(
          "    {\"n\": %d, \"bytes\": %d, \"kernel\": %s, \"op\": %s, \"note\": %s, "
          "\"median_us\": %.3f, \"min_us\": %.3f, \"max_us\": %.3f, \"gbps\": %.1f, "
          "\"pct_peak\": %.2f, \"pct_ceiling\": %.2f, \"vs_cub\": %.4f, \"step\": %.3f, "
          "\"cumulative\": %.3f, \"call_us\": %.2f, \"wrong\": %d,\n     \"kernel_us\": %s,\n"
          "     \"call_us_runs\": %s}",
          row.n, row.bytes, JsonString(row.kernel), JsonString(row.op), JsonString(row.note),
          d.median_us, d.min_us, d.max_us, d.gbps, d.pct_peak, d.pct_ceiling, d.vs_cub, d.step,
          d.cumulative, d.call_us, row.wrong, JsonNumbers(row.kernel_us),
          JsonNumbers(row.call_us)));
    }
    begin = end;
  }
  return out + absl::StrJoin(items, ",\n") + "\n  ]\n}\n";
}

}  // namespace gpureduce::bench
