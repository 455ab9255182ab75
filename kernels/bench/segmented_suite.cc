#include "kernels/bench/segmented_suite.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/reduction/op.h"
#include "kernels/bench/dtype_data.h"
#include "kernels/bench/segmented_cub.h"
#include "kernels/cuda/segmented/segmented_sum.h"
#include "kernels/cuda/single_pass/single_pass.h"
#include "kernels/scratch_layout.h"

namespace gpureduce::bench {
namespace {

constexpr uint64_t kSeed = 23;
// Segment lengths swept: the goals name 16, 128, 1K, 8K, 64K, 1M, 8M, 64M and 100M.
constexpr uint64_t kLengths[] = {
    16, 32, 64, 128, 1024, 8192, 65536, 1 << 20, 1 << 23, uint64_t{1} << 26, 100000000};
constexpr uint64_t kColumns[] = {256, 1024, 4096, 65536, 1 << 20};
// CUB's DeviceReduce is called once per segment up to this many segments.
constexpr uint64_t kMostPerSegmentCalls = 64;

struct Measured {
  std::string layout;  // "segments" or "columns"
  uint64_t extent;     // segment length, or columns
  uint64_t outputs;
  Row row;
  double gbps() const { return row.bytes / (Median(row.kernel_us) * 1e3); }
};

class SegmentedSuite {
 public:
  SegmentedSuite(const Context& context, size_t bytes, int warmup, int runs, cudaStream_t stream)
      : context_(context),
        n_(bytes / sizeof(float)),
        warmup_(warmup),
        runs_(runs),
        stream_(stream) {
    const size_t stride = (n_ + 127) / 128 * 128;  // 512-byte boundaries
    const size_t copies = std::max<size_t>(2, 2 * context.l2_bytes / (stride * 4) + 2);
    CheckCuda(cudaMalloc(&d_ring_, copies * stride * sizeof(float)), "ring");
    CheckCuda(FillTyped(DType::kFloat32, d_ring_, copies * stride, stride, kSeed, stream_), "fill");
    for (size_t c = 0; c < copies; ++c)
      ring_.push_back(static_cast<const float*>(d_ring_) + c * stride);
    host_.resize(n_);
    CheckCuda(cudaMemcpy(host_.data(), ring_[0], n_ * sizeof(float), cudaMemcpyDeviceToHost),
              "copy back");
    kernels::ScratchCarver measure;
    kernels::CarveSinglePassScratch(measure);
    CheckCuda(cudaMalloc(&d_single_pass_scratch_, measure.end()), "cudaMalloc");
    CheckCuda(cudaMemset(d_single_pass_scratch_, 0, measure.end()), "cudaMemset");
    kernels::ScratchCarver carver(static_cast<std::byte*>(d_single_pass_scratch_));
    single_pass_ = {context.gpu, kernels::CarveSinglePassScratch(carver), stream};
    CheckCuda(cudaMalloc(reinterpret_cast<void**>(&d_partial_), sizeof(Partial)), "cudaMalloc");
  }
  ~SegmentedSuite() {
    cudaFree(d_ring_);
    cudaFree(d_single_pass_scratch_);
    cudaFree(d_partial_);
  }

  std::vector<Measured> Run() {
    std::vector<Measured> results;
    Case full;
    full.kernel = "single_pass";
    full.op = "sum";
    full.launch = [this](const float* in) {
      return kernels::cuda::SinglePassReduce(single_pass_, Op::kSum, in, n_, 0, d_partial_, false);
    };
    full.read = [this] { return Sync(); };
    full.check = [](const Answer&) { return true; };
    results.push_back({"whole", n_, 1, Measure(full, n_, ring_, warmup_, runs_, stream_)});
    for (uint64_t length : kLengths) {
      if (length <= n_) RunSegments(length, results);
    }
    for (uint64_t cols : kColumns) {
      if (cols * 64 <= n_) RunColumns(cols, results);
    }
    return results;
  }

 private:
  Answer Sync() {
    CheckCuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    return Answer{};
  }

  // Outputs that are not the float32 rounding of the exact sums `exact`.
  int Wrong(const float* d_out, const std::vector<double>& exact) {
    std::vector<float> got(exact.size());
    CheckCuda(cudaMemcpy(got.data(), d_out, got.size() * sizeof(float), cudaMemcpyDeviceToHost),
              "copy out");
    int wrong = 0;
    for (size_t i = 0; i < exact.size(); ++i)
      wrong += got[i] == static_cast<float>(exact[i]) ? 0 : 1;
    return wrong;
  }

  Case Timed(std::string kernel, std::function<cudaError_t(const float*)> launch) {
    Case c;
    c.kernel = std::move(kernel);
    c.op = "sum";
    c.launch = std::move(launch);
    c.read = [this] { return Sync(); };
    c.check = [](const Answer&) { return true; };
    return c;
  }

  void RunSegments(uint64_t length, std::vector<Measured>& results) {
    const uint64_t segments = (n_ + length - 1) / length;
    std::vector<uint64_t> offsets(segments + 1);
    std::vector<double> exact(segments, 0.0);
    for (uint64_t s = 0; s <= segments; ++s) offsets[s] = std::min<uint64_t>(s * length, n_);
    for (uint64_t s = 0; s < segments; ++s) {
      for (uint64_t i = offsets[s]; i < offsets[s + 1]; ++i) exact[s] += host_[i];
    }
    uint64_t* d_offsets = nullptr;
    float* d_out = nullptr;
    void* d_scratch = nullptr;
    void* d_cub = nullptr;
    size_t cub_bytes = 0;
    const size_t scratch_bytes = kernels::cuda::SegmentedSumScratchBytes(context_.gpu, n_);
    CheckCuda(cudaMalloc(reinterpret_cast<void**>(&d_offsets), offsets.size() * 8), "cudaMalloc");
    CheckCuda(cudaMemcpy(d_offsets, offsets.data(), offsets.size() * 8, cudaMemcpyHostToDevice),
              "offsets");
    CheckCuda(cudaMalloc(reinterpret_cast<void**>(&d_out), segments * sizeof(float)), "cudaMalloc");
    CheckCuda(cudaMalloc(&d_scratch, std::max<size_t>(scratch_bytes, 8)), "cudaMalloc");
    CheckCuda(CubSegmentedBytes(n_, segments, d_offsets, &cub_bytes), "cub bytes");
    CheckCuda(cudaMalloc(&d_cub, std::max<size_t>(cub_bytes, 8)), "cudaMalloc");

    auto add = [&](const Case& c, int wrong) {
      Row row = Measure(c, n_, ring_, warmup_, runs_, stream_);
      row.note = absl::StrFormat("length %d, %d segments", length, segments);
      row.wrong += wrong;
      results.push_back({"segments", length, segments, std::move(row)});
    };
    const kernels::cuda::Segments by_offsets{segments, d_offsets, 0};
    auto ours = [&, by_offsets](const float* in) {
      return kernels::cuda::SegmentedSum(context_.gpu, in, n_, by_offsets, d_out, d_scratch,
                                         scratch_bytes, stream_);
    };
    CheckCuda(ours(ring_[0]), "segmented");
    CheckCuda(cudaStreamSynchronize(stream_), "segmented");
    add(Timed("segmented", ours), Wrong(d_out, exact));
    if (n_ % length == 0) {
      const kernels::cuda::Segments uniform{segments, nullptr, length};
      auto rows = [&, uniform](const float* in) {
        return kernels::cuda::SegmentedSum(context_.gpu, in, n_, uniform, d_out, d_scratch,
                                           scratch_bytes, stream_);
      };
      CheckCuda(rows(ring_[0]), "segmented rows");
      CheckCuda(cudaStreamSynchronize(stream_), "segmented rows");
      add(Timed("segmented_rows", rows), Wrong(d_out, exact));
    }
    add(Timed("cub_segmented",
              [&](const float* in) {
                return CubSegmentedSum(in, segments, d_offsets, d_out, d_cub, cub_bytes, stream_);
              }),
        0);
    if (segments <= kMostPerSegmentCalls) {
      add(Timed("cub_per_segment",
                [&](const float* in) {
                  for (uint64_t s = 0; s < segments; ++s) {
                    const cudaError_t error = CubRangeSum(in, offsets[s], offsets[s + 1], d_out + s,
                                                          d_cub, cub_bytes, stream_);
                    if (error != cudaSuccess) return error;
                  }
                  return cudaSuccess;
                }),
          0);
    }
    cudaFree(d_offsets);
    cudaFree(d_out);
    cudaFree(d_scratch);
    cudaFree(d_cub);
  }

  void RunColumns(uint64_t cols, std::vector<Measured>& results) {
    const uint64_t rows = n_ / cols;
    std::vector<double> exact(cols, 0.0);
    for (uint64_t r = 0; r < rows; ++r) {
      const float* row = host_.data() + r * cols;
      for (uint64_t c = 0; c < cols; ++c) exact[c] += row[c];
    }
    float* d_out = nullptr;
    void* d_scratch = nullptr;
    const size_t scratch_bytes = kernels::cuda::StridedSumScratchBytes(context_.gpu, rows, cols);
    CheckCuda(cudaMalloc(reinterpret_cast<void**>(&d_out), cols * sizeof(float)), "cudaMalloc");
    CheckCuda(cudaMalloc(&d_scratch, std::max<size_t>(scratch_bytes, 8)), "cudaMalloc");
    auto ours = [&](const float* in) {
      return kernels::cuda::StridedSum(context_.gpu, in, rows, cols, d_out, d_scratch,
                                       scratch_bytes, stream_);
    };
    CheckCuda(ours(ring_[0]), "strided");
    CheckCuda(cudaStreamSynchronize(stream_), "strided");
    const int wrong = Wrong(d_out, exact);
    Row row = Measure(Timed("strided", ours), rows * cols, ring_, warmup_, runs_, stream_);
    row.note = absl::StrFormat("(%d, %d) axis 0", rows, cols);
    row.wrong += wrong;
    results.push_back({"columns", cols, cols, std::move(row)});
    cudaFree(d_out);
    cudaFree(d_scratch);
  }

  const Context& context_;
  const size_t n_;
  const int warmup_, runs_;
  cudaStream_t stream_;
  void* d_ring_ = nullptr;
  std::vector<const float*> ring_;
  std::vector<float> host_;
  void* d_single_pass_scratch_ = nullptr;
  kernels::cuda::SinglePassLaunch single_pass_{};
  Partial* d_partial_ = nullptr;
};

// The tables, and each goal of issue 23 met or short.
std::string Report(const Context& context, const std::vector<Measured>& results) {
  const double full = results.front().gbps();
  std::string out = absl::StrFormat(
      "## segmented and strided float32 SUM over %.2f GB: GB/s and fraction of the production "
      "full reduction (single_pass, %.0f GB/s, %.1f%% of peak)\n\n"
      "| layout | length / columns | outputs | kernel | median us | GB/s | of full | x CUB "
      "segmented | wrong |\n|---|---:|---:|---|---:|---:|---:|---:|---:|\n",
      results.front().row.bytes / 1e9, full, 100 * full / context.peak_gbps);
  std::string goals = "\nGoals:";
  for (size_t i = 1; i < results.size(); ++i) {
    const Measured& m = results[i];
    double cub = 0;
    for (const Measured& other : results) {
      if (other.layout == m.layout && other.extent == m.extent &&
          other.row.kernel == "cub_segmented") {
        cub = other.gbps();
      }
    }
    const bool ours = m.row.kernel == "segmented" || m.row.kernel == "strided";
    absl::StrAppendFormat(
        &out, "| %s | %d | %d | %s | %.1f | %.0f | %.3f | %s | %d |\n", m.layout, m.extent,
        m.outputs, m.row.kernel, Median(m.row.kernel_us), m.gbps(), m.gbps() / full,
        cub > 0 && m.row.kernel != "cub_segmented" ? absl::StrFormat("%.2f", m.gbps() / cub) : "",
        m.row.wrong);
    if (!ours) continue;
    double want = m.layout == "columns" ? 0.85 : m.extent < 128 ? 0.6 : 0.9;
    std::string verdict =
        absl::StrFormat(" %s %d: %.2f of full (goal %.2f)%s", m.layout, m.extent, m.gbps() / full,
                        want, m.gbps() / full >= want ? "" : " SHORT");
    if (cub > 0) {
      const bool weak = cub < 0.5 * context.peak_gbps;
      const double cub_goal = weak ? 2.0 : 1.0;
      absl::StrAppendFormat(&verdict, ", %.2fx CUB (goal %.1fx)%s", m.gbps() / cub, cub_goal,
                            m.gbps() / cub >= cub_goal ? "" : " SHORT");
    }
    goals += verdict + ";";
  }
  return out + goals + "\n\n";
}

}  // namespace

void RunSegmentedSuite(const Context& context, size_t bytes, int warmup, int runs,
                       cudaStream_t stream, FILE* out, std::vector<Row>* rows) {
  SegmentedSuite suite(context, bytes, warmup, runs, stream);
  const std::vector<Measured> results = suite.Run();
  std::fputs(Report(context, results).c_str(), out);
  std::fflush(out);
  for (const Measured& m : results) {
    Row row = m.row;
    row.op = absl::StrFormat("sum %s %d", m.layout, m.extent);
    rows->push_back(std::move(row));
  }
}

}  // namespace gpureduce::bench
