// gpureduce-bench: the kernel ladder measured the way the seed documents do, with CUB beside it
// in the same run. Cold inputs (a ring of buffers larger than twice the L2), median of many
// CUDA-event-timed runs, every run's result checked against the exact sum.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/flags.h"
#include "kernels/bench/bench_data.h"
#include "kernels/cuda/ladder/ladder.h"

namespace gpureduce::bench {
namespace {

struct Row {
  std::string kernel;
  std::vector<double> kernel_ms;
  std::vector<double> call_us;
  int wrong = 0;
};

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

#define BENCH_CUDA(call)                                                                   \
  do {                                                                                     \
    if (cudaError_t e = (call); e != cudaSuccess) {                                        \
      std::fprintf(stderr, "gpureduce-bench: %s: %s\n", #call, cudaGetErrorName(e));       \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (false)

struct Device {
  int sms = 0;
  size_t l2 = 0;
  double peak_gbps = 0;
  std::string name;
};

Device ReadDevice() {
  cudaDeviceProp props{};
  BENCH_CUDA(cudaGetDeviceProperties(&props, 0));
  int clock_khz = 0;
  BENCH_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, 0));
  return Device{props.multiProcessorCount, size_t(props.l2CacheSize),
                2.0 * clock_khz * 1e3 * (props.memoryBusWidth / 8.0) / 1e9, props.name};
}

// Times `launch` over the ring of inputs; `result` reads the answer back for the check.
template <typename LaunchT, typename ResultT>
Row Measure(const std::string& name, const std::vector<float*>& ring, int warmup, int runs,
            double expected, double tolerance, cudaStream_t stream, LaunchT launch,
            ResultT result) {
  Row row{name, {}, {}, 0};
  cudaEvent_t start, stop;
  BENCH_CUDA(cudaEventCreate(&start));
  BENCH_CUDA(cudaEventCreate(&stop));
  for (int run = -warmup; run < runs; ++run) {
    const float* input = ring[(run + warmup) % ring.size()];
    const auto call_start = std::chrono::steady_clock::now();
    BENCH_CUDA(cudaEventRecord(start, stream));
    BENCH_CUDA(launch(input));
    BENCH_CUDA(cudaEventRecord(stop, stream));
    const double value = result();  // copies the scalar back and synchronizes
    const double call_us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - call_start)
            .count();
    if (run < 0) continue;
    float ms = 0;
    BENCH_CUDA(cudaEventElapsedTime(&ms, start, stop));
    row.kernel_ms.push_back(ms);
    row.call_us.push_back(call_us);
    if (!(std::fabs(value - expected) <= tolerance)) ++row.wrong;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return row;
}

}  // namespace
}  // namespace gpureduce::bench

int main(int argc, char** argv) {
  using namespace gpureduce;
  using namespace gpureduce::bench;
  std::string sizes_text = "12582912,16777216";
  std::string only;
  uint32_t runs = 50, warmup = 5, block = 0;
  bool list = false, csv = false;
  FlagSet flags("gpureduce-bench", "gpureduce-bench [flags]",
                "Times every ladder variant and CUB DeviceReduce::Sum on float32 inputs, cold "
                "(a ring of inputs larger than twice the L2), median of --runs CUDA-event-timed "
                "runs; every run is checked against the exact sum.");
  flags.AddString("sizes", &sizes_text, "comma-separated element counts (default: seed 003's "
                  "3 x 2^22 and seed 002's 2^24)", "N,N");
  flags.AddString("kernels", &only, "only these ladder variants (comma-separated)", "LIST");
  flags.AddUint32("runs", &runs, "timed runs per kernel and size");
  flags.AddUint32("warmup", &warmup, "untimed runs first");
  flags.AddUint32("block-size", &block, "threads per block; 0: each variant's default");
  flags.AddBool("list", &list, "list the variants and exit (needs no GPU)");
  flags.AddBool("csv", &csv, "CSV instead of Markdown");
  if (absl::Status parsed = flags.Parse(argc, argv); !parsed.ok()) {
    std::fprintf(stderr, "gpureduce-bench: %s\n", std::string(parsed.message()).c_str());
    return 2;
  }
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return 0;
  }
  if (list) {
    for (const kernels::LadderPolicy& policy : kernels::kLadder) {
      std::printf("%-22s %s\n", policy.name, policy.lineage);
    }
    return 0;
  }
  const Device device = ReadDevice();
  cudaStream_t stream;
  BENCH_CUDA(cudaStreamCreate(&stream));
  std::printf("# %s, %d SMs, %.0f MB L2, %.0f GB/s theoretical; median of %u runs, cold\n\n",
              device.name.c_str(), device.sms, device.l2 / 1e6, device.peak_gbps, runs);
  for (absl::string_view size_text : absl::StrSplit(sizes_text, ',')) {
    const size_t n = std::stoull(std::string(size_text));
    const size_t bytes = n * sizeof(float);
    const size_t ring_size = std::max<size_t>(2, (2 * device.l2) / bytes + 2);
    std::vector<float*> ring(ring_size);
    for (size_t i = 0; i < ring_size; ++i) {
      BENCH_CUDA(cudaMalloc(reinterpret_cast<void**>(&ring[i]), bytes));
      BENCH_CUDA(FillDevice(ring[i], n, 42, stream));  // same values: one exact reference
    }
    const HostSummary summary = Summarize(n, 42);
    const double tolerance = 1e-4 * summary.abs_sum;
    void* scratch = nullptr;
    size_t cub_bytes = 0;
    BENCH_CUDA(CubTempBytes(n, &cub_bytes));
    const size_t scratch_bytes = std::max(cub_bytes, kernels::cuda::LadderScratchBytes(n));
    BENCH_CUDA(cudaMalloc(&scratch, scratch_bytes));
    kernels::Partial* d_partial = nullptr;
    float* d_cub = nullptr;
    BENCH_CUDA(cudaMalloc(reinterpret_cast<void**>(&d_partial), sizeof(kernels::Partial)));
    BENCH_CUDA(cudaMalloc(reinterpret_cast<void**>(&d_cub), sizeof(float)));
    kernels::Partial* h_partial = nullptr;
    BENCH_CUDA(cudaMallocHost(reinterpret_cast<void**>(&h_partial), sizeof(kernels::Partial)));

    std::vector<Row> rows;
    for (const kernels::LadderPolicy& policy : kernels::kLadder) {
      if (!only.empty() && absl::StrCat(",", only, ",").find(absl::StrCat(",", policy.name, ",")) ==
                               std::string::npos) {
        continue;
      }
      const uint32_t threads = block != 0 ? block : policy.default_block_size;
      rows.push_back(Measure(
          policy.name, ring, warmup, runs, summary.sum, tolerance, stream,
          [&](const float* input) {
            *h_partial = kernels::Partial{};
            cudaMemcpyAsync(d_partial, h_partial, sizeof(*h_partial), cudaMemcpyHostToDevice,
                            stream);
            return kernels::cuda::LadderReduceInto(policy.variant, kernels::Op::kSum, input, n,
                                                   threads, device.sms, d_partial, scratch,
                                                   scratch_bytes, stream);
          },
          [&] {
            cudaMemcpyAsync(h_partial, d_partial, sizeof(*h_partial), cudaMemcpyDeviceToHost,
                            stream);
            cudaStreamSynchronize(stream);
            return h_partial->value;
          }));
    }
    float* h_cub = reinterpret_cast<float*>(h_partial);
    rows.push_back(Measure(
        "cub (DeviceReduce::Sum)", ring, warmup, runs, summary.sum, tolerance, stream,
        [&](const float* input) {
          size_t temp = scratch_bytes;
          return CubReduce(CubOp::kSum, input, n, d_cub, scratch, temp, stream);
        },
        [&] {
          cudaMemcpyAsync(h_cub, d_cub, sizeof(float), cudaMemcpyDeviceToHost, stream);
          cudaStreamSynchronize(stream);
          return double{*h_cub};
        }));

    if (csv) {
      std::printf("n,kernel,median_ms,min_ms,max_ms,gbps,pct_peak,step,cumulative,call_us,wrong\n");
    } else {
      std::printf("## n = %zu (%.1f MB)\n\n| kernel | median ms | min | max | GB/s | %% of peak "
                  "| step | cumulative | call us | wrong |\n"
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
                  n, bytes / 1e6);
    }
    double first = 0, previous = 0;
    for (const Row& row : rows) {
      const double median = Median(row.kernel_ms);
      const double gbps = bytes / (median * 1e6);
      if (first == 0) first = previous = median;
      const auto [lo, hi] = std::minmax_element(row.kernel_ms.begin(), row.kernel_ms.end());
      const std::string cells = absl::StrFormat(
          csv ? "%s,%.4f,%.4f,%.4f,%.1f,%.1f,%.3f,%.3f,%.1f,%d"
              : "| %s | %.4f | %.4f | %.4f | %.1f | %.1f | %.3f | %.3f | %.1f | %d |",
          row.kernel, median, *lo, *hi, gbps, 100 * gbps / device.peak_gbps, previous / median,
          first / median, Median(row.call_us), row.wrong);
      if (csv) {
        std::printf("%zu,%s\n", n, cells.c_str());
      } else {
        std::printf("%s\n", cells.c_str());
      }
      previous = median;
    }
    std::printf("\n");
    for (float* buffer : ring) cudaFree(buffer);
    cudaFree(scratch);
    cudaFree(d_partial);
    cudaFree(d_cub);
    cudaFreeHost(h_partial);
  }
  return 0;
}
