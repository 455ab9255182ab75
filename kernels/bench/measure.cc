#include "kernels/bench/measure.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace gpureduce::bench {

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

void CheckCuda(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return;
  std::fprintf(stderr, "gpureduce-bench: %s: %s (%s)\n", what, cudaGetErrorName(error),
               cudaGetErrorString(error));
  std::exit(1);
}

Row Measure(const Case& c, size_t n, const std::vector<const float*>& ring, int warmup, int runs,
            cudaStream_t stream) {
  Row row;
  row.n = n;
  row.bytes = n * sizeof(float);
  row.kernel = c.kernel;
  row.op = c.op;
  row.note = c.note;
  cudaEvent_t start, stop;
  CheckCuda(cudaEventCreate(&start), "cudaEventCreate");
  CheckCuda(cudaEventCreate(&stop), "cudaEventCreate");
  size_t next = 0;
  auto input = [&] { return ring[next++ % ring.size()]; };
  // Kernel time: events around the launch alone.
  for (int run = -warmup; run < runs; ++run) {
    CheckCuda(cudaEventRecord(start, stream), "cudaEventRecord");
    CheckCuda(c.launch(input()), c.kernel.c_str());
    CheckCuda(cudaEventRecord(stop, stream), "cudaEventRecord");
    const Answer answer = c.read();
    if (run < 0) continue;
    float ms = 0;
    CheckCuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    row.kernel_us.push_back(ms * 1e3);
    if (!c.check(answer)) ++row.wrong;
  }
  // Call time: launch, answer on the host, synchronized; no events in the way.
  const auto& call_launch = c.call_launch ? c.call_launch : c.launch;
  const auto& call_read = c.call_read ? c.call_read : c.read;
  for (int run = -warmup; run < runs; ++run) {
    const auto started = std::chrono::steady_clock::now();
    CheckCuda(call_launch(input()), c.kernel.c_str());
    const Answer answer = call_read();
    const auto ended = std::chrono::steady_clock::now();
    if (run < 0) continue;
    row.call_us.push_back(std::chrono::duration<double, std::micro>(ended - started).count());
    if (!c.check(answer)) ++row.wrong;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return row;
}

}  // namespace gpureduce::bench
