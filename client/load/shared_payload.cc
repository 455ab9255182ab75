#include "client/load/shared_payload.h"

#include <chrono>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/shared_memory/shared_memory_object.h"
#include "common/status_macros.h"

#if GPUREDUCE_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace gpureduce::client {
namespace {

class SystemPayload final : public SharedPayload {
 public:
  SystemPayload(SharedMemoryObject object, uint64_t bytes)
      : SharedPayload(bytes), object_(std::move(object)) {}
  ~SystemPayload() override { Unregister(); }

  absl::Status Write(uint64_t offset, std::span<const std::byte> data) override {
    std::memcpy(static_cast<char*>(object_.data()) + offset, data.data(), data.size_bytes());
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<v1::SharedMemoryRegion> RegisterWith(ReducerClient& client,
                                                      const std::string& name) override {
    // Once the server has mapped it, it removes the name, so that nothing is left in /dev/shm
    // however this process ends.
    absl::StatusOr<v1::SharedMemoryRegion> region =
        client.RegisterSystemSharedMemory(name, object_.key(), 0, bytes_, {}, /*unlink_key=*/true);
    if (region.ok()) object_.Unlink().IgnoreError();  // a server that could not, or an old one
    return region;
  }

  SharedMemoryObject object_;
};

#if GPUREDUCE_HAVE_CUDA
absl::Status CudaFailure(const char* what, cudaError_t error) {
  return absl::InternalError(
      absl::StrCat(what, ": ", cudaGetErrorName(error), " (", cudaGetErrorString(error), ")"));
}

class CudaPayload final : public SharedPayload {
 public:
  CudaPayload(void* memory, int device, uint64_t bytes)
      : SharedPayload(bytes), device_(memory), ordinal_(device) {}
  ~CudaPayload() override {
    Unregister();
    cudaSetDevice(ordinal_);
    cudaFree(device_);
  }

  absl::Status Write(uint64_t offset, std::span<const std::byte> data) override {
    cudaSetDevice(ordinal_);
    if (cudaError_t error = cudaMemcpy(static_cast<char*>(device_) + offset, data.data(),
                                       data.size_bytes(), cudaMemcpyHostToDevice);
        error != cudaSuccess) {
      return CudaFailure("copying the payload to the GPU", error);
    }
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<v1::SharedMemoryRegion> RegisterWith(ReducerClient& client,
                                                      const std::string& name) override {
    cudaSetDevice(ordinal_);
    cudaIpcMemHandle_t handle;
    if (cudaError_t error = cudaIpcGetMemHandle(&handle, device_); error != cudaSuccess) {
      return CudaFailure("cudaIpcGetMemHandle", error);
    }
    return client.RegisterCudaSharedMemory(
        name, std::string(handle.reserved, sizeof(handle.reserved)), ordinal_, 0, bytes_);
  }

  void* device_;
  const int ordinal_;  // the GPU it is on
};
#endif

}  // namespace

absl::StatusOr<SharedPayload::Kind> SharedPayload::ParseKind(const std::string& name) {
  if (name == "system") return Kind::kSystem;
  if (name == "cuda") {
#if GPUREDUCE_HAVE_CUDA
    return Kind::kCuda;
#else
    return absl::UnimplementedError("--shared-memory=cuda: this build has no CUDA");
#endif
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--shared-memory: '", name, "' is neither 'system' nor 'cuda'"));
}

absl::StatusOr<std::unique_ptr<SharedPayload>> SharedPayload::Create(Kind kind, uint64_t bytes,
                                                                     int device) {
  if (kind == Kind::kSystem) {
    ASSIGN_OR_RETURN(SharedMemoryObject object, SharedMemoryObject::Create(bytes));
    return std::make_unique<SystemPayload>(std::move(object), bytes);
  }
#if GPUREDUCE_HAVE_CUDA
  if (cudaError_t error = cudaSetDevice(device); error != cudaSuccess) {
    return CudaFailure(absl::StrCat("GPU ", device).c_str(), error);
  }
  void* memory = nullptr;
  if (cudaError_t error = cudaMalloc(&memory, bytes); error != cudaSuccess) {
    return CudaFailure(absl::StrCat("allocating ", bytes, " bytes on GPU ", device).c_str(), error);
  }
  return std::make_unique<CudaPayload>(memory, device, bytes);
#else
  return absl::UnimplementedError("--shared-memory=cuda: this build has no CUDA");
#endif
}

absl::Status SharedPayload::Register(ReducerClient& client, const std::string& name) {
  const auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(const v1::SharedMemoryRegion region, RegisterWith(client, name));
  client_register_us_ =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  server_register_us_ = region.register_us();
  client_ = &client;
  name_ = name;
  return absl::OkStatus();
}

void SharedPayload::Unregister() {
  if (client_ == nullptr) return;
  CallOptions options;
  options.timeout = absl::Seconds(10);
  (void)client_->UnregisterSharedMemory(name_, options);
  client_ = nullptr;
}

}  // namespace gpureduce::client
