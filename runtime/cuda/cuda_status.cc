#include "runtime/cuda/cuda_status.h"

#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gpureduce::runtime {
namespace {

// Where a CudaError status keeps its cudaError_t (absl::Status payloads are keyed by a URL).
constexpr char kCudaErrorPayload[] = "type.gpureduce/cuda-error";

}  // namespace

absl::Status CudaError(cudaError_t error, const char* call, const char* file, int line) {
  const std::string message = absl::StrCat(cudaGetErrorName(error), " (", cudaGetErrorString(error),
                                           ") in ", call, " at ", file, ":", line);
  absl::Status status = error == cudaErrorMemoryAllocation ? absl::ResourceExhaustedError(message)
                                                           : absl::InternalError(message);
  status.SetPayload(kCudaErrorPayload, absl::Cord(absl::StrCat(static_cast<int>(error))));
  return status;
}

std::optional<cudaError_t> CudaErrorOf(const absl::Status& status) {
  const absl::optional<absl::Cord> payload = status.GetPayload(kCudaErrorPayload);
  int code = 0;
  if (!payload.has_value() || !absl::SimpleAtoi(std::string(*payload), &code)) {
    return std::nullopt;
  }
  return static_cast<cudaError_t>(code);
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

}  // namespace gpureduce::runtime
