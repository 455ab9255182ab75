// gpureduce-bench: the kernels measured directly (no server), the way the seed documents measure
// them and with CUB beside them in the same run. Two suites:
//   ladder      the ten ladder variants (SUM) at the seeds' sizes, step and cumulative speedups,
//               then single_pass and CUB DeviceReduce::Sum;
//   production  single_pass against CUB for SUM, MIN, MAX, ARGMIN and ARGMAX, plus single_pass
//               summing in float32 and at an input offset by one float, and a plain read;
//   dtypes      the stats kernel (every dtype; SUM, MIN, ARGMIN, VAR and five ops in one read)
//               beside CUB on the same bytes and float32 single_pass SUM (dtypes_suite.h).
// Cold inputs (a ring larger than twice the L2), median of many CUDA-event-timed runs, the call
// time on the host clock; every run's answer is checked against the host's exact summary.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/flags.h"
#include "common/json_flag.h"
#include "common/reduction/op_name.h"
#include "gpureduce/version.h"
#include "kernels/bench/bench_data.h"
#include "kernels/bench/dtypes_suite.h"
#include "kernels/bench/host_read_suite.h"
#include "kernels/bench/measure.h"
#include "kernels/bench/report.h"
#include "kernels/bench/segmented_suite.h"
#include "kernels/bench/single_pass_variants.h"
#include "kernels/cuda/ladder/ladder.h"
#include "kernels/cuda/single_pass/single_pass.h"
#include "kernels/scratch_layout.h"

namespace gpureduce::bench {
namespace {

constexpr uint64_t kSeed = 42;

struct Options {
  std::string suite = "ladder";
  std::string sizes;
  bool sweep = false;
  std::string kernels;
  std::vector<gpureduce::Op> ops;  // production suite; parsed from --ops
  uint32_t runs = 50, warmup = 5, block = 0;
  uint32_t max_blocks = 0;
};

bool Selected(const std::string& list, const std::string& name) {
  return list.empty() ||
         absl::StrCat(",", list, ",").find(absl::StrCat(",", name, ",")) != std::string::npos;
}

Context ReadContext(const Options& options) {
  cudaDeviceProp props{};
  CheckCuda(cudaGetDeviceProperties(&props, 0), "cudaGetDeviceProperties");
  int clock_khz = 0;
  CheckCuda(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, 0), "clock rate");
  Context context;
  context.device = props.name;
  context.sms = props.multiProcessorCount;
  context.gpu = {props.multiProcessorCount, props.maxThreadsPerMultiProcessor,
                 props.major * 10 + props.minor};
  context.l2_bytes = size_t(props.l2CacheSize);
  context.peak_gbps = 2.0 * clock_khz * 1e3 * (props.memoryBusWidth / 8.0) / 1e9;
  context.suite = options.suite;
  context.runs = static_cast<int>(options.runs);
  context.warmup = static_cast<int>(options.warmup);
  context.commit = kGitCommit;
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%MZ", std::gmtime(&now));
  context.date = date;
  return context;
}

// Identical copies of the benchmark values, enough of them to span twice the L2, so that no run
// finds its input in the cache. Each copy has 4 spare floats for offset inputs.
class Ring {
 public:
  Ring(size_t n, size_t l2_bytes, cudaStream_t stream) {
    stride_ = (n + 4 + 63) / 64 * 64;
    const size_t copy_bytes = stride_ * sizeof(float);
    const size_t copies = std::max<size_t>(2, 2 * l2_bytes / copy_bytes + 2);
    CheckCuda(cudaMalloc(reinterpret_cast<void**>(&base_), copies * copy_bytes),
              "cudaMalloc(ring)");
    CheckCuda(FillDevice(base_, copies * stride_, stride_, kSeed, stream), "FillDevice");
    CheckCuda(cudaStreamSynchronize(stream), "fill");
    for (size_t i = 0; i < copies; ++i) copies_.push_back(base_ + i * stride_);
  }
  ~Ring() { cudaFree(base_); }
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  std::vector<const float*> At(size_t offset) const {
    std::vector<const float*> out;
    for (const float* copy : copies_) out.push_back(copy + offset);
    return out;
  }

 private:
  float* base_ = nullptr;
  size_t stride_ = 0;
  std::vector<const float*> copies_;
};

// Device and host buffers every case shares.
struct Buffers {
  void* d_scratch = nullptr;  // ladder and CUB scratch (results first)
  size_t scratch_bytes = 0;
  void* d_single_pass = nullptr;  // single_pass's counter and block states
  gpureduce::Partial* d_partial = nullptr;
  gpureduce::Partial* h_partial = nullptr;  // pinned; also mapped for single_pass's result
};

Answer ReadPartial(Buffers& b, cudaStream_t stream) {
  CheckCuda(cudaMemcpyAsync(b.h_partial, b.d_partial, sizeof(gpureduce::Partial),
                            cudaMemcpyDeviceToHost, stream),
            "cudaMemcpyAsync");
  CheckCuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return {b.h_partial->value, b.h_partial->index};
}

Answer ReadCub(Buffers& b, cudaStream_t stream) {
  CheckCuda(cudaMemcpyAsync(b.h_partial, b.d_scratch, 16, cudaMemcpyDeviceToHost, stream),
            "cudaMemcpyAsync");
  CheckCuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  const char* bytes = reinterpret_cast<const char*>(b.h_partial);
  return {*reinterpret_cast<const float*>(bytes), *reinterpret_cast<const int64_t*>(bytes + 8)};
}

struct Checks {
  HostSummary summary;
  std::function<bool(const Answer&)> Sum(double relative) const {
    const double exact = summary.sum, bound = relative * summary.abs_sum;
    return [=](const Answer& a) { return std::fabs(a.value - exact) <= bound; };
  }
  std::function<bool(const Answer&)> Extreme(bool min, bool with_index) const {
    const double value = min ? summary.min : summary.max;
    const int64_t index = min ? summary.argmin : summary.argmax;
    return [=](const Answer& a) { return a.value == value && (!with_index || a.index == index); };
  }
};

constexpr double kFloat32Sum = 1e-4;  // float32 accumulation (ladder, CUB, single_pass f32)
constexpr double kFloat64Sum = 1e-9;  // single_pass's goal

class Bench {
 public:
  Bench(const Options& options, const Context& context, cudaStream_t stream)
      : options_(options), context_(context), stream_(stream) {
    single_pass_.gpu = context.gpu;
    single_pass_.stream = stream;
    single_pass_.max_blocks = options.max_blocks;
    kernels::ScratchCarver measure;
    kernels::CarveSinglePassScratch(measure);
    CheckCuda(cudaMalloc(&b_.d_single_pass, measure.end()), "cudaMalloc");
    CheckCuda(cudaMemset(b_.d_single_pass, 0, measure.end()), "cudaMemset");
    kernels::ScratchCarver carver(static_cast<std::byte*>(b_.d_single_pass));
    single_pass_.scratch = kernels::CarveSinglePassScratch(carver);
    CheckCuda(cudaMalloc(reinterpret_cast<void**>(&b_.d_partial), sizeof(gpureduce::Partial)),
              "cudaMalloc");
    CheckCuda(cudaHostAlloc(reinterpret_cast<void**>(&b_.h_partial), sizeof(gpureduce::Partial),
                            cudaHostAllocMapped),
              "cudaHostAlloc");
    CheckCuda(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mapped_), b_.h_partial, 0),
              "cudaHostGetDevicePointer");
  }
  ~Bench() {
    cudaFree(b_.d_scratch);
    cudaFree(b_.d_single_pass);
    cudaFree(b_.d_partial);
    cudaFreeHost(b_.h_partial);
  }

  std::vector<Row> RunSize(size_t n) {
    EnsureScratch(n);
    const Ring ring(n, context_.l2_bytes, stream_);
    const Checks aligned{Summarize(0, n, kSeed)};
    std::vector<Row> rows;
    auto add = [&](Case c, size_t offset = 0) {
      rows.push_back(
          Measure(c, n, ring.At(offset), int(options_.warmup), int(options_.runs), stream_));
    };
    if (options_.suite == "ladder") {
      for (const kernels::LadderPolicy& policy : kernels::kLadder) {
        if (Selected(options_.kernels, policy.name)) add(LadderCase(policy, n, aligned));
      }
      add(SinglePassCase(gpureduce::Op::kSum, n, aligned.Sum(kFloat64Sum)));
      add(CubCase(gpureduce::Op::kSum, n, aligned.Sum(kFloat32Sum)));
      return rows;
    }
    add(ReadCase(n));
    for (gpureduce::Op op : options_.ops) {
      const bool sum = op == gpureduce::Op::kSum;
      const auto check =
          sum ? aligned.Sum(kFloat64Sum)
              : aligned.Extreme(op == gpureduce::Op::kMin || op == gpureduce::Op::kArgMin,
                                gpureduce::OpReturnsIndex(op));
      add(SinglePassCase(op, n, check));
      if (sum) {
        add(SinglePassRow(op, "float32 accumulation", aligned.Sum(kFloat32Sum),
                          [this, n](const float* in, gpureduce::Partial* out) {
                            return SinglePassSumFloat32(single_pass_, in, n, out);
                          }));
        for (auto [shape, note] : {std::pair{SinglePassShape::k256x8, "256 threads x 8 vectors"},
                                   std::pair{SinglePassShape::k512x4, "512 threads x 4 vectors"}}) {
          add(SinglePassRow(op, note, aligned.Sum(kFloat64Sum),
                            [this, n, shape = shape](const float* in, gpureduce::Partial* out) {
                              return SinglePassSumShape(single_pass_, shape, in, n, out);
                            }));
        }
        const Checks offset{Summarize(1, n, kSeed)};
        Case shifted = SinglePassCase(op, n, offset.Sum(kFloat64Sum));
        shifted.note = "offset 1";
        add(shifted, 1);
      }
      add(CubCase(op, n, sum ? aligned.Sum(kFloat32Sum) : check));
    }
    return rows;
  }

  // The best median bandwidth of the plain read over a few grid sizes, at 2^28 floats.
  double MeasureCeiling() {
    const size_t n = size_t{1} << 28;
    EnsureScratch(n);
    const Ring ring(n, context_.l2_bytes, stream_);
    double best = 0;
    for (int per_sm : {4, 8, 16, 31}) {
      Case c = ReadCase(n);
      c.launch = [this, n, per_sm](const float* in) {
        return ReadAll(in, n, per_sm * context_.sms, sink_, stream_);
      };
      const Row row = Measure(c, n, ring.At(0), 3, 20, stream_);
      best = std::max(best, row.bytes / (Median(row.kernel_us) * 1e3));
    }
    return best;
  }

 private:
  // The read kernel's per-block outputs share the scratch too: 64 KiB holds them.
  void EnsureScratch(size_t n) {
    size_t cub_bytes = 0;
    CheckCuda(CubScratchBytes(n, &cub_bytes), "CubScratchBytes");
    kernels::ScratchCarver ladder_measure;
    kernels::CarveLadderScratch(ladder_measure, n);
    const size_t bytes = std::max({cub_bytes, ladder_measure.end(), size_t{64} << 10});
    if (bytes > b_.scratch_bytes) {
      cudaFree(b_.d_scratch);
      CheckCuda(cudaMalloc(&b_.d_scratch, bytes), "cudaMalloc(scratch)");
      b_.scratch_bytes = bytes;
      sink_ = static_cast<float*>(b_.d_scratch);
    }
    kernels::ScratchCarver ladder(static_cast<std::byte*>(b_.d_scratch));
    ladder_scratch_ = kernels::CarveLadderScratch(ladder, n);
  }

  Answer ReadMapped() {
    CheckCuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    return {b_.h_partial->value, b_.h_partial->index};
  }

  Case LadderCase(const kernels::LadderPolicy& policy, size_t n, const Checks& checks) {
    const uint32_t threads = options_.block != 0 ? options_.block : policy.default_block_size;
    return {policy.name,
            "sum",
            "",
            [this, &policy, n, threads](const float* in) {
              const gpureduce::Partial empty;
              *b_.h_partial = empty;
              CheckCuda(cudaMemcpyAsync(b_.d_partial, b_.h_partial, sizeof(empty),
                                        cudaMemcpyHostToDevice, stream_),
                        "cudaMemcpyAsync");
              return kernels::cuda::LadderReduceInto(policy, gpureduce::Op::kSum, in, n, threads,
                                                     context_.gpu, b_.d_partial, ladder_scratch_,
                                                     stream_);
            },
            [this] { return ReadPartial(b_, stream_); },
            checks.Sum(kFloat32Sum)};
  }

  // `run(input, output)` timed into device memory, like CUB, and called into mapped pinned
  // memory, so the call is one launch and one synchronize.
  using SinglePassRun = std::function<cudaError_t(const float*, gpureduce::Partial*)>;
  Case SinglePassRow(gpureduce::Op op, std::string note, std::function<bool(const Answer&)> check,
                     SinglePassRun run) {
    Case c{"single_pass",
           std::string(gpureduce::OpName(op)),
           std::move(note),
           [this, run](const float* in) { return run(in, b_.d_partial); },
           [this] { return ReadPartial(b_, stream_); },
           std::move(check)};
    c.call_launch = [this, run](const float* in) { return run(in, mapped_); };
    c.call_read = [this] { return ReadMapped(); };
    return c;
  }

  Case SinglePassCase(gpureduce::Op op, size_t n, std::function<bool(const Answer&)> check) {
    return SinglePassRow(
        op, "", std::move(check), [this, op, n](const float* in, gpureduce::Partial* out) {
          return kernels::cuda::SinglePassReduce(single_pass_, op, in, n, 0, out, false);
        });
  }

  Case CubCase(gpureduce::Op op, size_t n, std::function<bool(const Answer&)> check) {
    return {"cub",
            std::string(gpureduce::OpName(op)),
            "",
            [this, op, n](const float* in) {
              return CubReduce(op, in, n, b_.d_scratch, b_.scratch_bytes, stream_);
            },
            [this] { return ReadCub(b_, stream_); },
            std::move(check)};
  }

  Case ReadCase(size_t n) {
    return {"read",
            "read",
            "no result: the plain read, for comparison",
            [this, n](const float* in) {
              const size_t tiles = (n / 4 + 1023) / 1024;
              const int blocks = static_cast<int>(std::min<size_t>(tiles, 8 * context_.sms));
              return ReadAll(in, n / 4 * 4, blocks, sink_, stream_);
            },
            [this] {
              CheckCuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
              return Answer{};
            },
            [](const Answer&) { return true; }};
  }

  const Options& options_;
  const Context& context_;
  cudaStream_t stream_;
  Buffers b_;
  gpureduce::Partial* mapped_ = nullptr;  // device view of b_.h_partial
  float* sink_ = nullptr;
  kernels::cuda::SinglePassLaunch single_pass_{};
  kernels::LadderScratch ladder_scratch_;  // over b_.d_scratch
};

std::vector<size_t> Sizes(const Options& options) {
  std::vector<size_t> sizes;
  if (options.sweep) {
    for (int e = 10; e <= 30; ++e) sizes.push_back(size_t{1} << e);
  } else if (!options.sizes.empty()) {
    for (absl::string_view text : absl::StrSplit(options.sizes, ',')) {
      sizes.push_back(std::stoull(std::string(text)));
    }
  } else if (options.suite == "ladder") {
    sizes = {size_t{3} << 22, size_t{1} << 24};  // seed 003's and seed 002's sizes
  } else {
    sizes = {size_t{1} << 10, size_t{1} << 20, size_t{1} << 24, size_t{1} << 28};
  }
  return sizes;
}

}  // namespace
}  // namespace gpureduce::bench

int main(int argc, char** argv) {
  using namespace gpureduce;
  using namespace gpureduce::bench;
  Options options;
  bool list = false, csv = false;
  JsonFlag json;
  FlagSet flags(
      "gpureduce-bench", "gpureduce-bench [flags]",
      "Times gpureduce's CUDA kernels directly, with CUB DeviceReduce in the same run: cold "
      "inputs (a ring over twice the L2), median of --runs CUDA-event-timed runs, and the call "
      "time (launch, result on the host, synchronized). Every run's answer is checked against "
      "the exact result; the 'wrong' column counts failures. --suite ladder reproduces the seed "
      "documents' tables; --suite production compares single_pass with CUB per op.");
  flags.AddChoice("suite", &options.suite,
                  {"ladder", "production", "dtypes", "segmented", "host-read"},
                  "what to measure; host-read: the host's read bandwidth, every hardware thread "
                  "reading --sizes bytes (default 4 GiB), the ceiling of system shared memory "
                  "(needs no GPU)");
  flags.AddString("sizes", &options.sizes,
                  "comma-separated element counts (default: ladder 3x2^22,2^24; production "
                  "2^10,2^20,2^24,2^28); dtypes: payload bytes (default 2^24,2^30)",
                  "N,N");
  flags.AddBool("sweep", &options.sweep, "every power of two from 2^10 to 2^30 elements");
  flags.AddString("kernels", &options.kernels, "ladder suite: only these variants", "LIST");
  std::string ops_text = "sum,min,max,argmin,argmax";
  flags.AddString("ops", &ops_text,
                  "production suite: the ops, each one CUB has (sum, min, max, argmin, argmax)",
                  "LIST");
  flags.AddUint32("runs", &options.runs, "timed runs per case (and as many timed calls)");
  flags.AddUint32("warmup", &options.warmup, "untimed runs first");
  flags.AddUint32("block-size", &options.block, "ladder threads per block; 0: each default");
  flags.AddUint32("max-blocks", &options.max_blocks,
                  "single_pass: the most blocks a launch uses (each reads 16 KiB tiles); 0: the "
                  "policy's rule");
  json.Register(flags, "every row and run", JsonFlag::Operands::kNone);
  flags.AddBool("csv", &csv, "CSV instead of Markdown on stdout");
  flags.AddBool("list", &list, "list the kernels and exit (needs no GPU)");
  if (absl::Status parsed = flags.Parse(argc, argv); !parsed.ok()) {
    std::fprintf(stderr, "gpureduce-bench: %s\n", std::string(parsed.message()).c_str());
    return 2;
  }
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return 0;
  }
  if (!flags.positional().empty()) {
    std::fprintf(stderr, "gpureduce-bench: unexpected argument '%s'\n",
                 flags.positional().front().c_str());
    return 2;
  }
  if (list) {
    for (const kernels::LadderPolicy& policy : kernels::kLadder) {
      std::printf("%-22s ladder      %s\n", policy.name, policy.lineage);
    }
    std::printf("%-22s production  one launch, float64 accumulation, every op\n", "single_pass");
    std::printf("%-22s array API   any dtype, several ops in one read (--suite dtypes)\n", "stats");
    std::printf("%-22s reference   CUB DeviceReduce, in the same run\n", "cub");
    return 0;
  }
  for (absl::string_view name : absl::StrSplit(ops_text, ',')) {
    const std::optional<gpureduce::Op> op = gpureduce::ParseOp(name);
    if (!op || std::find(std::begin(kCubOps), std::end(kCubOps), *op) == std::end(kCubOps)) {
      std::fprintf(stderr,
                   "gpureduce-bench: --ops: '%s' is not one of sum, min, max, argmin, "
                   "argmax\n",
                   std::string(name).c_str());
      return 2;
    }
    options.ops.push_back(*op);
  }
  if (options.runs == 0) {
    std::fprintf(stderr, "gpureduce-bench: --runs must be at least 1\n");
    return 2;
  }
  if (options.suite == "host-read") {
    return RunHostReadSuite(options.sizes.empty() ? size_t{4} << 30 : Sizes(options).front(), 0,
                            options.runs, stdout);
  }
  Context context = ReadContext(options);
  cudaStream_t stream;
  CheckCuda(cudaStreamCreate(&stream), "cudaStreamCreate");
  Bench bench(options, context, stream);
  context.ceiling_gbps = bench.MeasureCeiling();
  FILE* const text = json.on_stdout() ? stderr : stdout;  // the JSON takes stdout
  std::fprintf(text,
               "# %s, %d SMs, %.0f MB L2; theoretical %.0f GB/s, measured read ceiling %.0f GB/s; "
               "median of %u runs, cold; commit %s\n\n",
               context.device.c_str(), context.sms, context.l2_bytes / 1e6, context.peak_gbps,
               context.ceiling_gbps, options.runs, context.commit.c_str());
  std::vector<Row> all;
  if (options.suite == "dtypes") {
    std::vector<size_t> payloads = {size_t{1} << 24, size_t{1} << 30};
    if (!options.sizes.empty()) payloads = Sizes(options);
    RunDtypesSuite(context, payloads, int(options.warmup), int(options.runs), stream, text, &all);
  }
  if (options.suite == "segmented") {  // one payload: 1 GiB unless --sizes names its bytes
    const size_t bytes = options.sizes.empty() ? size_t{1} << 30 : Sizes(options).front();
    RunSegmentedSuite(context, bytes, int(options.warmup), int(options.runs), stream, text, &all);
  }
  const bool own_sizes = options.suite == "dtypes" || options.suite == "segmented";
  if (csv && !own_sizes) std::fputs(CsvHeader().c_str(), text);
  for (size_t n : own_sizes ? std::vector<size_t>{} : Sizes(options)) {
    const std::vector<Row> rows = bench.RunSize(n);
    std::fputs((csv ? CsvRows(context, rows) : MarkdownTable(context, rows)).c_str(), text);
    std::fflush(text);
    all.insert(all.end(), rows.begin(), rows.end());
  }
  if (json.requested()) {
    if (absl::Status written = json.Write(Json(context, all)); !written.ok()) {
      std::fprintf(stderr, "gpureduce-bench: %s\n", std::string(written.message()).c_str());
      return 1;
    }
  }
  int wrong = 0;
  for (const Row& row : all) wrong += row.wrong;
  if (wrong > 0) std::fprintf(stderr, "gpureduce-bench: %d runs gave a wrong answer\n", wrong);
  return wrong > 0 ? 1 : 0;
}
