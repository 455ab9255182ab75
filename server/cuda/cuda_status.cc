#include "server/cuda/cuda_status.h"

#include "absl/strings/str_cat.h"

namespace gpureduce::server {

absl::Status CudaError(cudaError_t error, const char* call, const char* file, int line) {
  const std::string message = absl::StrCat(cudaGetErrorName(error), " (",
                                           cudaGetErrorString(error), ") in ", call, " at ",
                                           file, ":", line);
  if (error == cudaErrorMemoryAllocation) return absl::ResourceExhaustedError(message);
  return absl::InternalError(message);
}

bool IsStickyCudaError(cudaError_t error) {
  switch (error) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorLaunchTimeout:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

}  // namespace gpureduce::server
