#include "kernels/kernel_registry.h"

#include <algorithm>
#include <bit>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/reduction/op_name.h"
#include "kernels/cuda/ladder/ladder_policy.h"

namespace gpureduce::kernels {
namespace {

std::vector<Op> ClassicOps() {
  return std::vector<Op>(std::begin(kClassicOps), std::end(kClassicOps));
}
std::vector<Op> EveryOp() { return std::vector<Op>(std::begin(kAllOps), std::end(kAllOps)); }
std::vector<DType> EveryDType() {
  return std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes));
}

// The ladder keeps the seeds' float32 accumulation and leaves ARGMIN/ARGMAX to cub and cpu.
KernelInfo LadderKernel(const LadderPolicy& policy) {
  return {.id = policy.id,
          .name = policy.name,
          .description = absl::StrCat(policy.description, "; float32 accumulation; blocks meet by ",
                                      policy.combine),
          .lineage = policy.lineage,
          .backend = BackendKind::kCuda,
          .ops = {Op::kSum, Op::kProd, Op::kMin, Op::kMax, Op::kMean, Op::kSumSquares},
          .dtypes = {DType::kFloat32},
          .multi_op = false,
          .deterministic = policy.deterministic,
          .default_block_size = policy.default_block_size,
          .min_block_size = policy.min_block_size,
          .max_block_size = policy.max_block_size};
}

std::vector<KernelInfo> MakeCatalogue() {
  std::vector<KernelInfo> catalogue = {
      {.id = KernelId::kCpu,
       .name = "cpu",
       .description = "Multi-threaded CPU reduction of every dtype and op: 64Ki-element tasks "
                      "(128Ki of 16-bit floats) "
                      "accumulated in float64 (compensated for float64, exact for integers) and "
                      "merged in order",
       .lineage = "",
       .backend = BackendKind::kCpu,
       .ops = EveryOp(),
       .dtypes = EveryDType(),
       .multi_op = true,
       .deterministic = true,
       .default_block_size = 0,
       .min_block_size = 0,
       .max_block_size = 0},
      {.id = KernelId::kSinglePass,
       .name = "single_pass",
       .description = "Production kernel: one launch, 16-byte loads at any alignment, float64 "
                      "sums (compensated for float64, exact for integers), products with their "
                      "exponent apart, first-occurrence arg ops, Welford/Chan moments, every "
                      "dtype and several ops in one read; the last block to finish combines the "
                      "block results in block order",
       .lineage = "",
       .backend = BackendKind::kCuda,
       .ops = EveryOp(),
       .dtypes = EveryDType(),
       .multi_op = true,
       .deterministic = true,
       .default_block_size = 0,
       .min_block_size = 0,
       .max_block_size = 0},
      {.id = KernelId::kCub,
       .name = "cub",
       .description = "CUB DeviceReduce/TransformReduce with NumPy-semantics operators: float64 "
                      "sums and products, NaN propagation, first-occurrence argmin/argmax",
       .lineage = "",
       .backend = BackendKind::kCuda,
       .ops = ClassicOps(),
       .dtypes = {DType::kFloat32},
       .multi_op = false,
       .deterministic = true,
       .default_block_size = 0,
       .min_block_size = 0,
       .max_block_size = 0},
  };
  for (const LadderPolicy& policy : kLadder) catalogue.push_back(LadderKernel(policy));
  // GetKernel indexes by id (the registry test checks that every id has its entry).
  std::sort(catalogue.begin(), catalogue.end(),
            [](const KernelInfo& a, const KernelInfo& b) { return a.id < b.id; });
  return catalogue;
}

}  // namespace

absl::string_view BackendName(BackendKind backend) {
  return backend == BackendKind::kCpu ? "cpu" : "cuda";
}

const std::vector<KernelInfo>& AllKernels() {
  static const std::vector<KernelInfo>* catalogue = new std::vector<KernelInfo>(MakeCatalogue());
  return *catalogue;
}

const KernelInfo& GetKernel(KernelId id) { return AllKernels()[static_cast<size_t>(id)]; }

KernelId DefaultKernel(BackendKind backend) {
  switch (backend) {
    case BackendKind::kCpu:
      return KernelId::kCpu;
    case BackendKind::kCuda:
      return KernelId::kSinglePass;
  }
  return KernelId::kCpu;
}

const KernelInfo* FindKernel(absl::string_view name) {
  for (const KernelInfo& kernel : AllKernels()) {
    if (kernel.name == name) return &kernel;
  }
  return nullptr;
}

absl::Status ValidateBlockSize(const KernelInfo& kernel, uint32_t block_size) {
  if (block_size == 0) return absl::OkStatus();
  if (kernel.max_block_size == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel '", kernel.name, "' takes no block size; send 0 (got ", block_size, ")"));
  }
  if (!std::has_single_bit(block_size) || block_size < kernel.min_block_size ||
      block_size > kernel.max_block_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("block size ", block_size, " is not valid for kernel '", kernel.name,
                     "': use 0 (default ", kernel.default_block_size, ") or a power of two from ",
                     kernel.min_block_size, " to ", kernel.max_block_size));
  }
  return absl::OkStatus();
}

absl::Status ValidateOp(const KernelInfo& kernel, Op op) {
  if (std::find(kernel.ops.begin(), kernel.ops.end(), op) != kernel.ops.end()) {
    return absl::OkStatus();
  }
  std::vector<std::string> with_op;
  for (const KernelInfo& other : AllKernels()) {
    if (std::find(other.ops.begin(), other.ops.end(), op) != other.ops.end()) {
      with_op.push_back(other.name);
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("kernel '", kernel.name, "' does not support ", OpName(op),
                   "; kernels that do: ", absl::StrJoin(with_op, ", ")));
}

bool Runs(const KernelInfo& kernel, std::span<const Op> ops, DType dtype) {
  if (ops.size() > 1 && !kernel.multi_op) return false;
  if (std::find(kernel.dtypes.begin(), kernel.dtypes.end(), dtype) == kernel.dtypes.end()) {
    return false;
  }
  return std::all_of(ops.begin(), ops.end(), [&](Op op) {
    return std::find(kernel.ops.begin(), kernel.ops.end(), op) != kernel.ops.end();
  });
}

absl::Status ValidateRequest(const KernelInfo& kernel, std::span<const Op> ops, DType dtype) {
  for (Op op : ops) {
    if (absl::Status status = ValidateOp(kernel, op); !status.ok()) return status;
  }
  if (Runs(kernel, ops, dtype)) return absl::OkStatus();
  std::vector<std::string> able;
  for (const KernelInfo& other : AllKernels()) {
    if (Runs(other, ops, dtype)) able.push_back(other.name);
  }
  const std::string what =
      ops.size() > 1 ? absl::StrCat(ops.size(), " ops in one request over ", DTypeName(dtype))
                     : std::string(DTypeName(dtype));
  return absl::InvalidArgumentError(absl::StrCat("kernel '", kernel.name, "' does not reduce ",
                                                 what,
                                                 "; kernels that do: ", absl::StrJoin(able, ", ")));
}

}  // namespace gpureduce::kernels
