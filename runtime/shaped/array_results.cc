#include "runtime/shaped/array_results.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/reduction/answer_encoding.h"

namespace gpureduce::runtime {

ArrayResults::ArrayResults(const ReduceLayout& layout, std::span<const gpureduce::Op> ops,
                           gpureduce::DType dtype, double ddof)
    : layout_(layout), dtype_(dtype), ddof_(ddof), overflows_(ops.size()) {
  for (gpureduce::Op op : ops) {
    ArrayResult& array = arrays_.emplace_back();
    array.op = op;
    array.dtype = gpureduce::ResultDType(op, dtype);
    array.data.resize(layout.outputs() * gpureduce::DTypeSize(array.dtype));
  }
}

void ArrayResults::Write(uint64_t first, std::span<const gpureduce::Stats> stats) {
  // Outputs after one already refused need no answers (the request fails); earlier ones are
  // still answered, so that the refusal names the first output refused, whichever thread
  // reaches it first.
  if (first > first_refused_.load(std::memory_order_relaxed)) return;
  for (size_t i = 0; i < arrays_.size(); ++i) {
    ArrayResult& array = arrays_[i];
    const size_t size = gpureduce::DTypeSize(array.dtype);
    const gpureduce::EncodedAnswers answers =
        gpureduce::EncodeAnswers(array.op, dtype_, ddof_, stats,
                                 reinterpret_cast<std::byte*>(array.data.data()) + first * size);
    if (!answers.status.ok()) {
      const uint64_t output = first + answers.failed;
      std::lock_guard<std::mutex> lock(mu_);
      if (output < first_refused_.load(std::memory_order_relaxed)) {
        status_ = absl::Status(answers.status.code(),
                               absl::StrCat(OutputName(output), ": ", answers.status.message()));
        first_refused_.store(output, std::memory_order_relaxed);
      }
      continue;  // the other ops may refuse an earlier output
    }
    overflows_[i].fetch_add(answers.overflows, std::memory_order_relaxed);
    if (layout_.outputs() == 1 && !stats.empty()) {  // the answer in `value` too, as a whole's
      array.only = *gpureduce::FinalizeOp(array.op, dtype_, ddof_, stats.front());
    }
  }
}

kernels::cpu::DirectAnswers ArrayResults::Direct(uint64_t first) {
  kernels::cpu::DirectAnswers direct;
  if (arrays_.size() > kernels::cpu::DirectAnswers::kMostOps || layout_.outputs() < 2) {
    return direct;
  }
  direct.ddof = ddof_;
  for (size_t i = 0; i < arrays_.size(); ++i) {
    ArrayResult& array = arrays_[i];
    direct.Add(
        array.op,
        reinterpret_cast<std::byte*>(array.data.data()) + first * gpureduce::DTypeSize(array.dtype),
        &overflows_[i]);
  }
  return direct;
}

absl::Status ArrayResults::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

std::vector<ArrayResult> ArrayResults::Take() {
  for (size_t i = 0; i < arrays_.size(); ++i) {
    arrays_[i].overflow_count = overflows_[i].load(std::memory_order_relaxed);
  }
  return std::move(arrays_);
}

// "segment 17", or the output's place in NumPy's result: "result[3, 0, 7]".
std::string ArrayResults::OutputName(uint64_t output) const {
  if (layout_.segmented()) return absl::StrCat("segment ", output);
  const std::vector<uint64_t>& shape = layout_.result_shape();
  std::vector<uint64_t> index(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    index[i] = output % shape[i];
    output /= shape[i];
  }
  return absl::StrCat("result[", absl::StrJoin(index, ", "), "]");
}

}  // namespace gpureduce::runtime
