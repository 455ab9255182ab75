#include "tests/gpu/kernel_fixture.h"

namespace gpureduce::testing {

double Float64KernelBound(gpureduce::Op op, size_t n) {
  using gpureduce::Op;
  if (op == Op::kProd) return double(n) * 0x1p-53 + 1e-15;
  if (op == Op::kSum || op == Op::kMean || op == Op::kSumSquares) return 1e-9;
  return 0;
}

void KernelFixture::SetUp() {
  int devices = 0;
  if (cudaError_t error = cudaGetDeviceCount(&devices); error != cudaSuccess || devices == 0) {
    GTEST_SKIP() << "no usable GPU: " << cudaGetErrorName(error);
  }
  cudaDeviceProp props{};
  ASSERT_EQ(cudaGetDeviceProperties(&props, 0), cudaSuccess);
  gpu_ = {props.multiProcessorCount, props.maxThreadsPerMultiProcessor,
          props.major * 10 + props.minor};
  ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_running_), sizeof(gpureduce::Partial)),
            cudaSuccess);
}

void KernelFixture::TearDown() {
  cudaFree(d_running_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

void KernelFixture::ResetRunning() {
  const gpureduce::Partial empty;
  ASSERT_EQ(cudaMemcpy(d_running_, &empty, sizeof(empty), cudaMemcpyHostToDevice), cudaSuccess);
}

cudaError_t KernelFixture::ReadRunning(gpureduce::Partial* partial) {
  if (cudaError_t error = cudaStreamSynchronize(stream_); error != cudaSuccess) return error;
  return cudaMemcpy(partial, d_running_, sizeof(*partial), cudaMemcpyDeviceToHost);
}

}  // namespace gpureduce::testing
