#include "runtime/cuda/client_memory.h"

#include <cuda.h>  // the driver API's types, for cuMemGetAddressRange (reached through the runtime)

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "runtime/cuda/cuda_status.h"

namespace gpureduce::runtime {
namespace {

class PinnedHostHold final : public MemoryHold {
 public:
  explicit PinnedHostHold(const void* base) : base_(base) {}
  ~PinnedHostHold() override { cudaHostUnregister(const_cast<void*>(base_)); }

 private:
  const void* base_;
};

class IpcHold final : public MemoryHold {
 public:
  IpcHold(const Device& device, void* data) : device_(device), data_(data) {}
  ~IpcHold() override {
    if (device_.Activate().ok()) cudaIpcCloseMemHandle(data_);
  }

 private:
  const Device& device_;
  void* data_;
};

// The allocation around `pointer`, from the driver (the runtime API has no equivalent).
absl::Status AllocationRange(const void* pointer, CUdeviceptr* base, size_t* bytes) {
  using GetAddressRange = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);
  void* function = nullptr;
  cudaDriverEntryPointQueryResult found{};
  CUDA_RETURN_IF_ERROR(cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &function, 12000,
                                                        cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || function == nullptr) {
    return absl::InternalError("the driver does not provide cuMemGetAddressRange");
  }
  const CUresult result = reinterpret_cast<GetAddressRange>(function)(
      base, bytes, reinterpret_cast<CUdeviceptr>(pointer));
  if (result != CUDA_SUCCESS) {
    return absl::InternalError(
        absl::StrCat("cuMemGetAddressRange failed (CUresult ", static_cast<int>(result), ")"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<MemoryHold>> PinHostMemory(const void* base, size_t bytes) {
  // Read only: the server maps the object without write permission, and never writes it.
  const cudaError_t error = cudaHostRegister(const_cast<void*>(base), bytes,
                                             cudaHostRegisterPortable | cudaHostRegisterReadOnly);
  if (error != cudaSuccess) {
    cudaGetLastError();  // not sticky: clear it
    absl::StatusCode code = absl::StatusCode::kInternal;
    std::string why;
    if (error == cudaErrorMemoryAllocation) {
      code = absl::StatusCode::kResourceExhausted;
      why = "the host may lack lockable memory (ulimit -l)";
    } else if (error == cudaErrorNotSupported) {
      code = absl::StatusCode::kFailedPrecondition;
      why =
          "this GPU and driver cannot pin memory read only (cudaHostRegisterReadOnly), which "
          "a read-only mapping needs";
    } else if (error == cudaErrorInvalidValue) {
      code = absl::StatusCode::kFailedPrecondition;
      why = "the object may have shrunk since its size was checked";
    }
    return absl::Status(code, absl::StrCat("pinning ", bytes,
                                           " bytes of the shared-memory object for the GPU "
                                           "failed: ",
                                           cudaGetErrorName(error), " (", cudaGetErrorString(error),
                                           ")", why.empty() ? "" : "; ", why));
  }
  return std::make_unique<PinnedHostHold>(base);
}

absl::StatusOr<OpenedDeviceMemory> OpenIpcMemory(std::span<const std::byte> handle,
                                                 const Device& device) {
  cudaIpcMemHandle_t ipc{};
  if (handle.size() != sizeof(ipc.reserved)) {
    return absl::InvalidArgumentError(absl::StrCat("raw_handle holds ", handle.size(),
                                                   " bytes; a cudaIpcMemHandle_t has ",
                                                   sizeof(ipc.reserved)));
  }
  std::memcpy(ipc.reserved, handle.data(), handle.size());
  RETURN_IF_ERROR(device.Activate());
  void* data = nullptr;
  if (cudaError_t error = cudaIpcOpenMemHandle(&data, ipc, cudaIpcMemLazyEnablePeerAccess);
      error != cudaSuccess) {
    cudaGetLastError();
    return absl::InvalidArgumentError(absl::StrCat(
        "GPU ", device.index(), " cannot open the CUDA IPC handle: ", cudaGetErrorName(error), " (",
        cudaGetErrorString(error),
        "); the handle must come from cudaIpcGetMemHandle in a live process on this host, on "
        "this device, and not from the server's own process"));
  }
  OpenedDeviceMemory opened;
  opened.hold = std::make_unique<IpcHold>(device, data);
  // Peer access would let this GPU read an allocation on another one, slowly and under the
  // wrong name: the allocation must be on the device the client named.
  cudaPointerAttributes attributes{};
  CUDA_RETURN_IF_ERROR(cudaPointerGetAttributes(&attributes, data));
  if (attributes.device != device.index()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the allocation is on GPU ", attributes.device, " (as this server numbers them), not GPU ",
        device.index(), ": register it with device_id ", attributes.device,
        " (ordinals differ between processes with different CUDA_VISIBLE_DEVICES)"));
  }
  opened.data = static_cast<const std::byte*>(data);
  opened.device = device.index();
  CUdeviceptr base = 0;
  size_t bytes = 0;
  RETURN_IF_ERROR(AllocationRange(data, &base, &bytes));
  opened.bytes = bytes - (reinterpret_cast<CUdeviceptr>(data) - base);
  return opened;
}

}  // namespace gpureduce::runtime
