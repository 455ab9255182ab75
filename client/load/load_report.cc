#include "client/load/load_report.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "common/byte_size.h"
#include "common/reduction/op_name.h"
#include "wire/op_mapping.h"

namespace gpureduce::client {
namespace {

constexpr double kPercentiles[] = {50, 90, 99, 99.9};

double Rate(uint64_t count, double seconds) { return seconds > 0 ? count / seconds : 0; }

// "sum", or "sum,min,max" for a request of several ops.
std::string OpsText(const WorkloadOptions& w) {
  if (w.ops.empty()) return wire::OpName(w.op);
  std::vector<std::string> names;
  for (const v1::Op op : w.ops) names.push_back(wire::OpName(op));
  return absl::StrJoin(names, ",");
}

// ", each as shape (1024, 1024) along axis 1: 1024 results per op" for array requests.
std::string LayoutText(const WorkloadOptions& w) {
  if (!w.layout.array()) return "";
  const uint64_t outputs = OutputCount(w.layout);
  return absl::StrCat(", each as ", DescribeLayout(w.layout), ": ", outputs,
                      outputs == 1 ? " result" : " results", " per op");
}

std::string What(const LoadRun& run) {
  const WorkloadOptions& w = run.workload;
  if (w.stream_bytes > 0) {
    return absl::StrCat("streams of ", FormatByteSize(w.stream_bytes), " in ",
                        FormatByteSize(w.chunk_bytes), " chunks", LayoutText(w));
  }
  return absl::StrCat("unary requests of ", w.floats, " ",
                      w.dtype == DType::kFloat32 ? "floats" : DTypeName(w.dtype), LayoutText(w));
}

std::string Load(const LoadRun& run) {
  const LoadOptions& o = run.options;
  const std::string loop = o.rate > 0 ? absl::StrFormat("open loop at %g rps", o.rate)
                                      : absl::StrCat("closed loop, concurrency ", o.concurrency);
  return absl::StrCat(loop, " on ", o.connections,
                      o.connections == 1 ? " connection" : " connections");
}

nlohmann::json Latency(const LatencyHistogram& h, double unit) {
  nlohmann::json out = {{"count", h.count()},
                        {"min", h.min() / unit},
                        {"mean", h.mean() / unit},
                        {"max", h.max() / unit}};
  for (double p : kPercentiles) out[absl::StrCat("p", p)] = h.ValueAtPercentile(p) / unit;
  return out;
}

// "min 0.101  p50 0.200 ... max 1.000  mean 0.250 ms\n"
std::string LatencyLine(const LatencyHistogram& h) {
  std::string out = absl::StrFormat("min %.3f", h.min() / 1e6);
  for (double p : kPercentiles) {
    absl::StrAppendFormat(&out, "  p%g %.3f", p, h.ValueAtPercentile(p) / 1e6);
  }
  absl::StrAppendFormat(&out, "  max %.3f  mean %.3f ms\n", h.max() / 1e6, h.mean() / 1e6);
  return out;
}

}  // namespace

nlohmann::json ReportJson(const LoadRun& run) {
  const LoadResult& r = run.result;
  const uint64_t answers = r.latency.count();
  nlohmann::json json = {
      {"label", run.label},
      {"target", run.options.target},
      {"mode", run.workload.stream_bytes > 0 ? "stream" : "unary"},
      {"floats", run.workload.stream_bytes > 0
                     ? run.workload.stream_bytes / DTypeSize(run.workload.dtype)
                     : run.workload.floats},
      {"dtype", std::string(DTypeName(run.workload.dtype))},
      {"chunk_bytes", run.workload.stream_bytes > 0 ? run.workload.chunk_bytes : 0},
      {"op", OpsText(run.workload)},
      {"layout", DescribeLayout(run.workload.layout)},
      {"outputs", run.workload.layout.array() ? OutputCount(run.workload.layout) : 1},
      {"kernel_requested", run.workload.kernel},
      {"connections", run.options.connections},
      {"concurrency", run.options.rate > 0 ? 0 : run.options.concurrency},
      {"rate", run.options.rate},
      {"warmup_s", absl::ToDoubleSeconds(run.options.warmup)},
      {"backend", r.backend},
      {"kernel", r.kernel},
      {"device", r.device},
      {"seconds", r.seconds},
      {"answers", answers},
      {"ok", r.ok},
      {"failed", r.failed},
      {"wrong", r.wrong},
      {"unchecked", r.unchecked},
      {"not_sent", r.not_sent},
      {"rps", Rate(answers, r.seconds)},
      {"gbps", Rate(r.bytes, r.seconds) / 1e9},
      {"latency_ms", Latency(r.latency, 1e6)},
      {"ok_latency_ms", Latency(r.ok_latency, 1e6)},
      {"error_latency_ms", Latency(r.error_latency, 1e6)},
      {"codes", r.codes},
      {"devices", r.devices},
      {"first_error", r.first_error},
      {"first_wrong", r.first_wrong},
  };
  const ServerBreakdown& b = r.breakdown;
  json["server_us"] = {{"server", Latency(b.server, 1e3)},
                       {"queue", Latency(b.queue, 1e3)},
                       {"h2d", Latency(b.h2d, 1e3)},
                       {"kernel", Latency(b.kernel, 1e3)},
                       {"d2h", Latency(b.d2h, 1e3)}};
  return json;
}

std::string ReportText(const LoadRun& run) {
  const LoadResult& r = run.result;
  const uint64_t answers = r.latency.count();
  std::string out = absl::StrCat("gpureduce-load: ", What(run), ", op ", OpsText(run.workload),
                                 ", dtype ", DTypeName(run.workload.dtype), ", kernel ",
                                 run.workload.kernel, " -> ", run.options.target);
  if (r.backend == "sink") {
    absl::StrAppend(&out, "\n  answered by: the sink (nothing computed, nothing to check)");
  } else if (!r.backend.empty()) {
    absl::StrAppend(&out, "\n  answered by: backend ", r.backend, ", kernel ", r.kernel, ", ",
                    r.device);
  }
  absl::StrAppendFormat(&out, "\n  load:      %s; %.2f s measured after %s warmup\n", Load(run),
                        r.seconds, absl::FormatDuration(run.options.warmup));
  absl::StrAppendFormat(&out,
                        "  answers:   %d (%d ok, %d errors, %d wrong, %d unchecked)   %.1f rps   "
                        "%.3f GB/s\n",
                        answers, r.ok, r.failed, r.wrong, r.unchecked, Rate(answers, r.seconds),
                        Rate(r.bytes, r.seconds) / 1e9);
  if (r.not_sent > 0) {
    absl::StrAppendFormat(&out, "  not sent:  %d (due while --max-outstanding were in flight)\n",
                          r.not_sent);
  }
  absl::StrAppend(&out, "  latency:   ", LatencyLine(r.latency));
  if (r.failed > 0 && r.ok > 0) {
    absl::StrAppend(&out, "    ok:      ", LatencyLine(r.ok_latency));
    absl::StrAppend(&out, "    errors:  ", LatencyLine(r.error_latency));
  }
  const ServerBreakdown& b = r.breakdown;
  if (b.server.count() > 0 && r.backend != "sink") {
    auto part = [](const char* name, const LatencyHistogram& h) {
      return absl::StrFormat("%s %.1f (%.1f)", name, h.ValueAtPercentile(50) / 1e3, h.mean() / 1e3);
    };
    absl::StrAppend(
        &out, "  server us, p50 (mean): ",
        absl::StrJoin({part("server", b.server), part("queue", b.queue), part("h2d", b.h2d),
                       part("kernel", b.kernel), part("d2h", b.d2h)},
                      "  "),
        "\n");
  }
  if (r.devices.size() > 1 || (r.devices.size() == 1 && r.devices.begin()->first != "0")) {
    std::vector<std::string> devices;
    for (const auto& [which, count] : r.devices) {
      devices.push_back(absl::StrCat("GPU ", which, ": ", count));
    }
    absl::StrAppend(&out, "  devices:   ", absl::StrJoin(devices, ", "), " OK answers\n");
  }
  std::vector<std::string> codes;
  for (const auto& [code, count] : r.codes) codes.push_back(absl::StrCat(code, " ", count));
  absl::StrAppend(&out, "  codes:     ", codes.empty() ? "none" : absl::StrJoin(codes, ", "), "\n");
  if (!r.first_error.empty()) absl::StrAppend(&out, "  an error:  ", r.first_error, "\n");
  if (!r.first_wrong.empty()) absl::StrAppend(&out, "  a wrong answer: ", r.first_wrong, "\n");
  return out;
}

std::string ReportCsvHeader() {
  return "label,mode,floats,chunk_bytes,op,kernel,backend,connections,concurrency,rate,seconds,"
         "answers,ok,failed,wrong,rps,gbps,lat_min_ms,lat_p50_ms,lat_p90_ms,lat_p99_ms,"
         "lat_p999_ms,lat_max_ms,server_p50_us,queue_p50_us,h2d_p50_us,kernel_p50_us,"
         "d2h_p50_us";
}

std::string ReportCsvRow(const LoadRun& run) {
  const nlohmann::json j = ReportJson(run);
  const nlohmann::json& lat = j["latency_ms"];
  const nlohmann::json& s = j["server_us"];
  return absl::StrFormat(
      "%s,%s,%d,%d,%s,%s,%s,%d,%d,%g,%.3f,%d,%d,%d,%d,%.1f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,"
      "%.2f,%.2f,%.2f,%.2f,%.2f",
      run.label, j["mode"].get<std::string>(), j["floats"].get<uint64_t>(),
      j["chunk_bytes"].get<uint64_t>(),
      absl::StrReplaceAll(j["op"].get<std::string>(), {{",", "+"}}), run.workload.kernel,
      run.result.backend, run.options.connections, j["concurrency"].get<uint32_t>(),
      run.options.rate, run.result.seconds, j["answers"].get<uint64_t>(), run.result.ok,
      run.result.failed, run.result.wrong, j["rps"].get<double>(), j["gbps"].get<double>(),
      lat["min"].get<double>(), lat["p50"].get<double>(), lat["p90"].get<double>(),
      lat["p99"].get<double>(), lat["p99.9"].get<double>(), lat["max"].get<double>(),
      s["server"]["p50"].get<double>(), s["queue"]["p50"].get<double>(),
      s["h2d"]["p50"].get<double>(), s["kernel"]["p50"].get<double>(),
      s["d2h"]["p50"].get<double>());
}

}  // namespace gpureduce::client
