#include "kernels/bench/dtypes_suite.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/reduction/op.h"
#include "common/reduction/op_name.h"
#include "common/reduction/op_result.h"
#include "common/reduction/stats.h"
#include "kernels/bench/bench_data.h"
#include "kernels/bench/dtype_data.h"
#include "kernels/cuda/single_pass/single_pass.h"
#include "kernels/reduce.h"
#include "kernels/scratch_layout.h"

namespace gpureduce::bench {
namespace {

constexpr uint64_t kSeed = 42;

// NumPy's name of the dtype, as every tool prints it.
const char* Label(DType dtype) { return DTypeName(dtype).data(); }

// One stats request: its ops, all answered from one launch.
struct StatsCase {
  const char* name;
  std::vector<Op> ops;
};

const StatsCase kStatsCases[] = {
    {"sum", {Op::kSum}},
    {"min", {Op::kMin}},
    {"argmin", {Op::kArgMin}},
    {"var", {Op::kVar}},
    {"sum,min,max,mean,std", {Op::kSum, Op::kMin, Op::kMax, Op::kMean, Op::kStd}},
};

// Whether every op of `ops` over the summarized input reads right out of `stats`.
bool StatsRight(const std::vector<Op>& ops, DType dtype, const TypedSummary& s, size_t n,
                const Stats& stats) {
  const long double scale = s.scale;
  const long double sum = static_cast<long double>(s.q_sum) * scale;
  const long double abs_sum = static_cast<long double>(s.q_abs_sum) * scale;
  const long double q_mean = static_cast<long double>(s.q_sum) / n;
  const long double var =
      (static_cast<long double>(s.q_square_sum) / n - q_mean * q_mean) * scale * scale;
  for (Op op : ops) {
    const absl::StatusOr<OpResult> r = FinalizeOp(op, dtype, 0, stats);
    if (!r.ok()) return false;
    bool right = false;
    switch (op) {
      case Op::kSum:
        right = IsInteger(dtype) ? static_cast<Int128>(r->int_value) == s.q_sum
                                 : std::fabs(r->unrounded - sum) <= 1e-9 * abs_sum;
        break;
      case Op::kMean:
        right = std::fabs(r->unrounded - sum / n) <= 1e-9 * abs_sum / n;
        break;
      case Op::kMin:
      case Op::kMax: {
        const int64_t q = op == Op::kMin ? s.q_min : s.q_max;
        right = IsInteger(dtype) ? r->int_value == q : r->value == q * s.scale;
        break;
      }
      case Op::kArgMin:
        right = r->index == s.argmin;
        break;
      case Op::kVar:
        right = std::fabs(r->unrounded - var) <= 1e-9 * var;
        break;
      case Op::kStd:
        right = std::fabs(r->unrounded - std::sqrt(var)) <= 1e-9 * std::sqrt(var);
        break;
      default:
        break;
    }
    if (!right) return false;
  }
  return true;
}

struct Result {
  DType dtype;
  std::string op, kernel;
  Row row;
};

class DtypesSuite {
 public:
  DtypesSuite(const Context& context, int warmup, int runs, cudaStream_t stream)
      : context_(context), warmup_(warmup), runs_(runs), stream_(stream) {
    kernels::ScratchCarver measure;
    kernels::CarveStatsScratch(measure);
    kernels::CarveSinglePassScratch(measure);
    CheckCuda(cudaMalloc(&d_kernel_scratch_, measure.end()), "cudaMalloc");
    CheckCuda(cudaMemset(d_kernel_scratch_, 0, measure.end()), "cudaMemset");
    kernels::ScratchCarver carver(static_cast<std::byte*>(d_kernel_scratch_));
    launch_.kernel = kernels::KernelId::kSinglePass;
    launch_.gpu = context.gpu;
    launch_.stream = stream;
    launch_.first = true;
    launch_.scratch.stats = kernels::CarveStatsScratch(carver);
    single_pass_ = {context.gpu, kernels::CarveSinglePassScratch(carver), stream};
    CheckCuda(cudaMalloc(reinterpret_cast<void**>(&d_stats_), sizeof(Stats)), "cudaMalloc");
    CheckCuda(cudaMalloc(reinterpret_cast<void**>(&d_partial_), sizeof(Partial)), "cudaMalloc");
    CheckCuda(cudaMallocHost(&h_result_, 512), "cudaMallocHost");
  }
  ~DtypesSuite() {
    cudaFree(d_kernel_scratch_);
    cudaFree(d_stats_);
    cudaFree(d_partial_);
    cudaFree(d_cub_);
    cudaFreeHost(h_result_);
  }

  std::vector<Result> RunSize(size_t bytes) {
    std::vector<Result> results;
    for (DType dtype : kAllDTypes) RunDType(dtype, bytes, results);
    return results;
  }

 private:
  void RunDType(DType dtype, size_t bytes, std::vector<Result>& results) {
    const size_t size = DTypeSize(dtype);
    const size_t n = bytes / size;
    // Copies of the input on 512-byte boundaries, enough to span twice the L2: every run cold.
    const size_t stride_bytes = (n * size + 511) / 512 * 512;
    const size_t copies = std::max<size_t>(2, 2 * context_.l2_bytes / stride_bytes + 2);
    std::byte* d_ring = nullptr;
    CheckCuda(cudaMalloc(reinterpret_cast<void**>(&d_ring), copies * stride_bytes), "ring");
    CheckCuda(
        FillTyped(dtype, d_ring, copies * stride_bytes / size, stride_bytes / size, kSeed, stream_),
        "FillTyped");
    CheckCuda(cudaStreamSynchronize(stream_), "fill");
    std::vector<const float*> ring;
    for (size_t c = 0; c < copies; ++c) {
      ring.push_back(reinterpret_cast<const float*>(d_ring + c * stride_bytes));
    }
    const TypedSummary summary = SummarizeTyped(dtype, n, kSeed);
    size_t cub_bytes = 0;
    CheckCuda(CubTypedBytes(dtype, n, &cub_bytes), "CubTypedBytes");
    if (cub_bytes > cub_bytes_) {
      cudaFree(d_cub_);
      CheckCuda(cudaMalloc(&d_cub_, cub_bytes), "cudaMalloc(cub)");
      cub_bytes_ = cub_bytes;
    }
    auto add = [&](const std::string& op, const std::string& kernel, const Case& c) {
      Row row = Measure(c, bytes / sizeof(float), ring, warmup_, runs_, stream_);
      row.n = n;
      row.bytes = n * size;
      results.push_back({dtype, op, kernel, std::move(row)});
    };
    if (dtype == DType::kFloat32) {  // the reference: single_pass SUM over the same float32 bytes
      add("sum", "single_pass", SinglePassSum(n, summary));
    }
    for (const StatsCase& stats_case : kStatsCases) {
      add(stats_case.name, "stats", StatsRequest(dtype, n, summary, stats_case.ops));
    }
    add("sum", "cub", CubCase(dtype, false, n, summary));
    add("min", "cub", CubCase(dtype, true, n, summary));
    cudaFree(d_ring);
  }

  Case StatsRequest(DType dtype, size_t n, const TypedSummary& summary, std::vector<Op> ops) {
    const StatsNeeds needs = NeedsOf(ops);
    Case c;
    c.kernel = "stats";
    c.launch = [this, dtype, n, needs](const float* in) {
      return kernels::cuda::ReduceStatsInto(launch_, dtype, needs,
                                            reinterpret_cast<const std::byte*>(in), n, 0, d_stats_);
    };
    c.read = [this, dtype, n, summary, ops] {
      Stats stats;
      CheckCuda(
          cudaMemcpyAsync(h_result_, d_stats_, sizeof(Stats), cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpyAsync");
      CheckCuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
      std::memcpy(&stats, h_result_, sizeof(Stats));
      return Answer{StatsRight(ops, dtype, summary, n, stats) ? 1.0 : 0.0};
    };
    c.check = [](const Answer& a) { return a.value == 1.0; };
    return c;
  }

  Case SinglePassSum(size_t n, const TypedSummary& summary) {
    Case c;
    c.kernel = "single_pass";
    c.launch = [this, n](const float* in) {
      return kernels::cuda::SinglePassReduce(single_pass_, Op::kSum, in, n, 0, d_partial_, false);
    };
    c.read = [this] {
      CheckCuda(
          cudaMemcpyAsync(h_result_, d_partial_, sizeof(Partial), cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpyAsync");
      CheckCuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
      return Answer{static_cast<Partial*>(h_result_)->value};
    };
    const double sum = static_cast<double>(summary.q_sum) * summary.scale;
    const double bound = 1e-9 * static_cast<double>(summary.q_abs_sum) * summary.scale;
    c.check = [sum, bound](const Answer& a) { return std::fabs(a.value - sum) <= bound; };
    return c;
  }

  // CUB in its own result type: float16 and bfloat16 sums accumulate in the input type, so
  // only their MIN is checked (and int32's sum wraps modulo 2^32, as CUB's does).
  Case CubCase(DType dtype, bool min, size_t n, const TypedSummary& summary) {
    Case c;
    c.kernel = "cub";
    c.launch = [this, dtype, min, n](const float* in) {
      return CubTyped(dtype, min, in, n, d_cub_, cub_bytes_, stream_);
    };
    c.read = [this, dtype] {
      CheckCuda(cudaMemcpyAsync(h_result_, d_cub_, 16, cudaMemcpyDeviceToHost, stream_),
                "cudaMemcpyAsync");
      CheckCuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
      return Answer{CubTypedValue(dtype, h_result_)};
    };
    const double scale = summary.scale;
    if (min) {
      const double want = static_cast<double>(summary.q_min) * scale;
      c.check = [want](const Answer& a) { return a.value == want; };
    } else if (dtype == DType::kFloat16 || dtype == DType::kBFloat16) {
      c.check = [](const Answer&) { return true; };
    } else if (dtype == DType::kInt32) {
      const double want = static_cast<int32_t>(static_cast<uint32_t>(summary.q_sum));
      c.check = [want](const Answer& a) { return a.value == want; };
    } else {
      const double want = static_cast<double>(summary.q_sum) * scale;
      const double bound =
          (dtype == DType::kFloat32 ? 1e-4 : 1e-9) * static_cast<double>(summary.q_abs_sum) * scale;
      c.check = [want, bound](const Answer& a) { return std::fabs(a.value - want) <= bound; };
    }
    return c;
  }

  const Context& context_;
  int warmup_, runs_;
  cudaStream_t stream_;
  void* d_kernel_scratch_ = nullptr;
  kernels::cuda::ChunkLaunch launch_{};
  kernels::cuda::SinglePassLaunch single_pass_{};
  Stats* d_stats_ = nullptr;
  Partial* d_partial_ = nullptr;
  void* d_cub_ = nullptr;
  size_t cub_bytes_ = 0;
  void* h_result_ = nullptr;
};

std::string Table(const std::vector<Result>& results, size_t bytes) {
  auto gbps = [](const Row& row) { return row.bytes / (Median(row.kernel_us) * 1e3); };
  double reference = 0, cub_float32 = 0;
  std::map<std::pair<int, std::string>, double> cub;  // (dtype, op) -> GB/s
  for (const Result& r : results) {
    if (r.kernel == "single_pass") reference = gbps(r.row);
    if (r.kernel == "cub") cub[{static_cast<int>(r.dtype), r.op}] = gbps(r.row);
    if (r.kernel == "cub" && r.dtype == DType::kFloat32 && r.op == "sum") cub_float32 = gbps(r.row);
  }
  std::string out = absl::StrFormat(
      "## payload %.1f MB: GB/s and fraction of float32 single_pass SUM (%.0f GB/s)\n\n"
      "| dtype | op | kernel | elements | median us | GB/s | of f32 SUM | of f32 CUB Sum | x CUB "
      "same dtype | call us | wrong |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
      bytes / 1e6, reference);
  for (const Result& r : results) {
    const double g = gbps(r.row);
    const std::string cub_op = r.op == "sum"                         ? "sum"
                               : (r.op == "min" || r.op == "argmin") ? "min"
                                                                     : "";
    const auto it = cub.find({static_cast<int>(r.dtype), cub_op});
    const std::string vs_cub =
        r.kernel != "cub" && it != cub.end() ? absl::StrFormat("%.3f", g / it->second) : "";
    absl::StrAppendFormat(
        &out, "| %s | %s | %s | %d | %.1f | %.0f | %.1f%% | %.1f%% | %s | %.1f | %d |\n",
        Label(r.dtype), r.op, r.kernel, r.row.n, Median(r.row.kernel_us), g,
        reference > 0 ? 100 * g / reference : 0, cub_float32 > 0 ? 100 * g / cub_float32 : 0,
        vs_cub, Median(r.row.call_us), r.row.wrong);
  }
  // The goals: every dtype's SUM >= 90%, VAR and the five ops >= 85% of float32 SUM.
  out += "\nGoals (stats kernel vs float32 single_pass SUM):";
  for (const Result& r : results) {
    if (r.kernel != "stats" || r.op == "min" || r.op == "argmin") continue;
    const double fraction = reference > 0 ? gbps(r.row) / reference : 0;
    const double goal = r.op == "sum" ? 0.90 : 0.85;
    absl::StrAppendFormat(&out, " %s %s %.1f%%%s;", Label(r.dtype), r.op, 100 * fraction,
                          fraction >= goal ? "" : " (SHORT)");
  }
  return out + "\n\n";
}

}  // namespace

void RunDtypesSuite(const Context& context, const std::vector<size_t>& payload_bytes, int warmup,
                    int runs, cudaStream_t stream, FILE* out, std::vector<Row>* rows) {
  DtypesSuite suite(context, warmup, runs, stream);
  for (size_t bytes : payload_bytes) {
    const std::vector<Result> results = suite.RunSize(bytes);
    std::fputs(Table(results, bytes).c_str(), out);
    std::fflush(out);
    for (const Result& r : results) {
      Row row = r.row;
      row.kernel = r.kernel;
      row.op = absl::StrFormat("%s %s", Label(r.dtype), r.op);
      rows->push_back(std::move(row));
    }
  }
}

}  // namespace gpureduce::bench
