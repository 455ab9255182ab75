#pragma once

// The catalogue of every kernel gpureduce knows, on every backend. A backend offers the subset
// it can run; a name in the catalogue that the running backend lacks is FAILED_PRECONDITION,
// a name outside it is INVALID_ARGUMENT.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/reduction/dtype.h"
#include "common/reduction/op.h"
#include "kernels/kernel_id.h"

namespace gpureduce::kernels {

enum class BackendKind { kCpu, kCuda };

absl::string_view BackendName(BackendKind backend);  // "cpu", "cuda"

struct KernelInfo {
  KernelId id;
  std::string name;
  std::string description;
  std::string lineage;  // seed steps it reproduces; empty for production kernels
  BackendKind backend;
  std::vector<Op> ops;
  std::vector<DType> dtypes;  // the payload types it reduces
  bool multi_op;              // several ops in one request (one read of the data)
  bool deterministic;
  uint32_t default_block_size;  // 0: the kernel takes no block size
  uint32_t min_block_size;
  uint32_t max_block_size;
};

// What an empty or "auto" kernel name means.
inline constexpr absl::string_view kAutoKernel = "auto";

// Every kernel, in KernelId order.
const std::vector<KernelInfo>& AllKernels();

const KernelInfo& GetKernel(KernelId id);

// nullptr when no backend has a kernel of that name.
const KernelInfo* FindKernel(absl::string_view name);

// What "auto" runs on each backend: `cpu`, and `single_pass` on a GPU.
KernelId DefaultKernel(BackendKind backend);

// OK for 0 (the default) or a power of two in the kernel's range; otherwise INVALID_ARGUMENT
// naming the valid range.
absl::Status ValidateBlockSize(const KernelInfo& kernel, uint32_t block_size);

// INVALID_ARGUMENT naming the kernels that do support `op` when `kernel` does not.
absl::Status ValidateOp(const KernelInfo& kernel, Op op);

// Whether `kernel` runs `ops` (one, or several where it takes several) over `dtype`.
bool Runs(const KernelInfo& kernel, std::span<const Op> ops, DType dtype);

// ValidateOp for each op, then INVALID_ARGUMENT naming the kernels that can when `kernel` does not
// take `dtype`, or several ops in one request.
absl::Status ValidateRequest(const KernelInfo& kernel, std::span<const Op> ops, DType dtype);

}  // namespace gpureduce::kernels
