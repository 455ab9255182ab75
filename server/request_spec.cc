#include "server/request_spec.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/work_bound.h"
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

}  // namespace

absl::StatusOr<runtime::RequestSpec> ResolveSpec(const v1::ReduceSpec& spec,
                                                 const runtime::Backend& backend) {
  const std::optional<Op> op = wire::FromProto(spec.op());
  if (!op.has_value()) {
    const int op_value = spec.op();
    return absl::InvalidArgumentError(
        absl::StrCat(op_value == 0 ? "op is not set" : absl::StrCat("unknown op ", op_value),
                     "; use one of ", OpChoices()));
  }
  runtime::RequestSpec out;
  out.op = *op;
  out.block_size = spec.block_size();
  out.expected_count = spec.expected_count();
  if (spec.has_device()) {
    if (spec.device() < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "device ", spec.device(), " is not a device index; GetServerInfo lists them"));
    }
    out.device = spec.device();
  }

  const kernels::KernelInfo* kernel = &kernels::GetKernel(backend.default_kernel());
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
  if (absl::Status status = kernels::ValidateOp(*kernel, out.op); !status.ok()) return status;
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
