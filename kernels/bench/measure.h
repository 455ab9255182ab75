#pragma once

// One benchmark case timed the way the seed documents and docs/performance.md time kernels:
// warm-up, then --runs CUDA-event-timed launches on inputs rotated through a ring larger than the
// L2 (every run cold), then as many "calls" timed on the host clock (launch, result on the host,
// stream synchronized), as a service sees them. Every run's answer is checked.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gpureduce::bench {

struct Answer {
  double value = 0;
  int64_t index = -1;
};

struct Case {
  std::string kernel;  // "single_pass", "cub", a ladder variant, "read"
  std::string op;      // "sum", "min", ...
  std::string note;    // what differs from the plain case ("offset 1", "float32 accumulation")
  // Enqueues one reduction of `input` on the bench's stream.
  std::function<cudaError_t(const float* input)> launch;
  // Waits for it and brings the answer to the host (part of the call time).
  std::function<Answer()> read;
  // True when `answer` is right.
  std::function<bool(const Answer&)> check;
  // For the call time, when it differs (single_pass writes its answer to mapped host memory).
  std::function<cudaError_t(const float* input)> call_launch = nullptr;
  std::function<Answer()> call_read = nullptr;
};

struct Row {
  size_t n = 0;
  size_t bytes = 0;
  std::string kernel, op, note;
  std::vector<double> kernel_us;
  std::vector<double> call_us;
  int wrong = 0;
};

double Median(std::vector<double> values);

// Aborts the process with the CUDA error (a benchmark has nothing sensible to go on with).
void CheckCuda(cudaError_t error, const char* what);

Row Measure(const Case& c, size_t n, const std::vector<const float*>& ring, int warmup, int runs,
            cudaStream_t stream);

}  // namespace gpureduce::bench
