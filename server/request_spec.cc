#include "server/request_spec.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/reduction/op_name.h"
#include "common/status_macros.h"
#include "kernels/work_bound.h"
#include "wire/dtype_mapping.h"
#include "wire/op_mapping.h"

namespace gpureduce::server {
namespace {

std::string OpChoices() {
  std::vector<std::string> names;
  for (Op op : kAllOps) names.push_back(v1::Op_Name(wire::ToProto(op)));
  return absl::StrJoin(names, ", ");
}

std::string KernelChoices(const runtime::Backend& backend) {
  std::vector<std::string> names = {std::string(kernels::kAutoKernel)};
  for (const kernels::KernelInfo* kernel : backend.Kernels()) names.push_back(kernel->name);
  return absl::StrJoin(names, ", ");
}

// What `auto` runs: the backend's default kernel where it takes the request's ops and dtype,
// else the first of the backend's kernels that does (the CPU's, on a CUDA server, for what its
// GPU kernels do not reduce).
const kernels::KernelInfo* AutoKernel(const runtime::Backend& backend, std::span<const Op> ops,
                                      DType dtype) {
  const kernels::KernelInfo* preferred = &kernels::GetKernel(backend.default_kernel());
  if (kernels::Runs(*preferred, ops, dtype)) return preferred;
  for (const kernels::KernelInfo* kernel : backend.Kernels()) {
    if (kernels::Runs(*kernel, ops, dtype)) return kernel;
  }
  return preferred;  // none: its refusal names the kernels that would
}

absl::StatusOr<std::vector<Op>> ResolveOps(const v1::ReduceSpec& spec) {
  if (spec.ops_size() > 0 && spec.op() != v1::OP_UNSPECIFIED) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.op (", v1::Op_Name(spec.op()), ") and spec.ops (", spec.ops_size(),
                     " ops) are both set; name one op in op, or every op in ops"));
  }
  std::vector<Op> ops;
  if (spec.ops_size() == 0) {
    const std::optional<Op> op = wire::FromProto(spec.op());
    if (!op.has_value()) {
      const int op_value = spec.op();
      return absl::InvalidArgumentError(absl::StrCat(
          op_value == 0 ? "spec.op is not set" : absl::StrCat("spec.op: unknown op ", op_value),
          "; use one of ", OpChoices(), " (or list several in spec.ops)"));
    }
    ops.push_back(*op);
    return ops;
  }
  for (int i = 0; i < spec.ops_size(); ++i) {
    const std::optional<Op> op = wire::FromProto(spec.ops(i));
    if (!op.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat("spec.ops[", i, "]: unknown op ", spec.ops(i),
                                                     "; use one of ", OpChoices()));
    }
    if (std::find(ops.begin(), ops.end(), *op) != ops.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("spec.ops[", i, "]: ", OpName(*op), " is listed twice; name each op once"));
    }
    ops.push_back(*op);
  }
  return ops;
}

}  // namespace

absl::StatusOr<runtime::RequestSpec> ResolveSpec(const v1::ReduceSpec& spec,
                                                 const runtime::Backend& backend) {
  ASSIGN_OR_RETURN(std::vector<Op> ops, ResolveOps(spec));
  ASSIGN_OR_RETURN(const DType dtype, wire::DTypeFromProto(spec.dtype()));
  if (!std::isfinite(spec.ddof())) {  // NumPy takes any other number, negative ones too
    return absl::InvalidArgumentError(
        absl::StrCat("spec.ddof is ", spec.ddof(), "; it must be a finite number (NumPy's ddof)"));
  }
  runtime::RequestSpec out;
  out.op = ops.front();
  if (ops.size() > 1) out.op_list = ops;
  out.dtype = dtype;
  out.ddof = spec.ddof();
  out.block_size = spec.block_size();
  out.expected_count = spec.expected_count();
  if (spec.has_device()) {
    if (spec.device() < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "device ", spec.device(), " is not a device index; GetServerInfo lists them"));
    }
    out.device = spec.device();
  }

  const kernels::KernelInfo* kernel = AutoKernel(backend, out.ops(), dtype);
  out.auto_kernel = spec.kernel().empty() || spec.kernel() == kernels::kAutoKernel;
  if (!out.auto_kernel) {
    kernel = kernels::FindKernel(spec.kernel());
    if (kernel == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown kernel '", spec.kernel(), "'; this server runs: ", KernelChoices(backend)));
    }
    if (!backend.Runs(*kernel)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "kernel '", spec.kernel(), "' needs the ", kernels::BackendName(kernel->backend),
          " backend, but this server runs the ", kernels::BackendName(backend.kind()),
          " backend; kernels available here: ", KernelChoices(backend)));
    }
  }
  if (absl::Status status = kernels::ValidateRequest(*kernel, out.ops(), dtype); !status.ok()) {
    return status;
  }
  if (absl::Status status = kernels::ValidateBlockSize(*kernel, out.block_size); !status.ok()) {
    return status;
  }
  // A declared size beyond the kernel's bound is refused before any data is read.
  if (absl::Status status = kernels::CheckWorkBound(kernel->id, out.op, out.expected_count);
      !status.ok()) {
    return status;
  }
  out.kernel = kernel->id;
  return out;
}

}  // namespace gpureduce::server
