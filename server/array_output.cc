#include "server/array_output.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/reduction/op_name.h"
#include "common/reduction/op_result.h"
#include "common/status_macros.h"

namespace gpureduce::server {

absl::StatusOr<std::unique_ptr<ArrayOutput>> ArrayOutput::Resolve(
    const RegionRegistry& registry, absl::string_view peer, const v1::SharedMemoryRef& ref,
    const ReduceLayout& layout, std::span<const Op> ops, DType dtype) {
  RETURN_IF_ERROR(registry.CheckCaller(peer));
  ASSIGN_OR_RETURN(std::shared_ptr<const Region> region, registry.Find(ref.region()));
  const RegionInfo& info = region->info();
  if (info.kind != RegionInfo::Kind::kSystem || !info.writable) {
    return absl::FailedPreconditionError(
        absl::StrCat("spec.output names region \"", ref.region(), "\", which ",
                     info.kind != RegionInfo::Kind::kSystem ? "is GPU memory (CUDA IPC)"
                                                            : "was not registered writable",
                     "; results go into a system region registered with writable set"));
  }
  // Each op's array at the next multiple of 8 (every result dtype's alignment).
  std::vector<uint64_t> offsets;
  uint64_t at = ref.offset();
  std::string needs;
  for (Op op : ops) {
    at = (at + 7) / 8 * 8;
    offsets.push_back(at);
    const uint64_t bytes = layout.outputs() * DTypeSize(ResultDType(op, dtype));
    absl::StrAppend(&needs, needs.empty() ? "" : " + ", OpName(op), " ", bytes);
    at += bytes;
  }
  const uint64_t size = info.byte_size;
  if (ref.offset() > size || ref.byte_size() > size - ref.offset()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "spec.output (offset ", ref.offset(), ", byte_size ", ref.byte_size(),
        ") ends past the end of region \"", ref.region(), "\", which holds ", size, " bytes"));
  }
  if (at - ref.offset() > ref.byte_size()) {
    return absl::InvalidArgumentError(absl::StrCat("spec.output.byte_size is ", ref.byte_size(),
                                                   ", but the results take ", at - ref.offset(),
                                                   " bytes (", needs,
                                                   ", each array's start at a multiple of 8 from "
                                                   "offset ",
                                                   ref.offset(), ")"));
  }
  return std::unique_ptr<ArrayOutput>(
      new ArrayOutput(std::move(region), std::move(offsets), ref.offset(), at));
}

absl::Status ArrayOutput::CheckApart(const Region& input_region,
                                     const v1::SharedMemoryRef& input) const {
  const RegionInfo& in = input_region.info();
  const RegionInfo& out = region_->info();
  if (in.kind != RegionInfo::Kind::kSystem || in.key != out.key) return absl::OkStatus();
  // Both as bytes of the one object.
  const uint64_t in_first = in.offset + input.offset(), in_end = in_first + input.byte_size();
  const uint64_t out_first = out.offset + first_, out_end = out.offset + end_;
  if (in_first < out_end && out_first < in_end) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.output (bytes ", out_first, " to ", out_end, " of \"", out.key,
                     "\") overlaps the payload (bytes ", in_first, " to ", in_end,
                     "); name output bytes apart from the array's"));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> ArrayOutput::Write(size_t i, std::span<const std::byte> bytes) const {
  RETURN_IF_ERROR(region_->Write(offsets_[i], bytes));
  return offsets_[i];
}

}  // namespace gpureduce::server
