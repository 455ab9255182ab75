#include "wire/op_mapping.h"

#include <iterator>

#include "common/reduction/op_name.h"

namespace gpureduce::wire {
namespace {

constexpr bool SameValue(Op op, v1::Op wire) { return static_cast<int>(op) == wire; }

static_assert(SameValue(Op::kSum, v1::SUM));
static_assert(SameValue(Op::kProd, v1::PROD));
static_assert(SameValue(Op::kMin, v1::MIN));
static_assert(SameValue(Op::kMax, v1::MAX));
static_assert(SameValue(Op::kMean, v1::MEAN));
static_assert(SameValue(Op::kSumSquares, v1::SUM_SQUARES));
static_assert(SameValue(Op::kArgMin, v1::ARGMIN));
static_assert(SameValue(Op::kArgMax, v1::ARGMAX));
static_assert(SameValue(Op::kNanSum, v1::NANSUM));
static_assert(SameValue(Op::kNanProd, v1::NANPROD));
static_assert(SameValue(Op::kNanMin, v1::NANMIN));
static_assert(SameValue(Op::kNanMax, v1::NANMAX));
static_assert(SameValue(Op::kNanMean, v1::NANMEAN));
static_assert(SameValue(Op::kNanArgMin, v1::NANARGMIN));
static_assert(SameValue(Op::kNanArgMax, v1::NANARGMAX));
static_assert(SameValue(Op::kVar, v1::VAR));
static_assert(SameValue(Op::kStd, v1::STD));
static_assert(SameValue(Op::kNanVar, v1::NANVAR));
static_assert(SameValue(Op::kNanStd, v1::NANSTD));
// Every wire op but OP_UNSPECIFIED has a domain op: a new one fails here until it is mapped.
static_assert(v1::OP_UNSPECIFIED == 0 && std::size(kAllOps) + 1 == v1::Op_ARRAYSIZE);

}  // namespace

// The static_asserts above make this cast the identity on every op, checked at compile time.
v1::Op ToProto(Op op) { return static_cast<v1::Op>(op); }

std::optional<Op> FromProto(int wire_value) {
  for (Op op : kAllOps) {
    if (ToProto(op) == wire_value) return op;
  }
  return std::nullopt;
}

std::vector<std::string> OpNames() {
  std::vector<std::string> names;
  for (Op op : kAllOps) names.emplace_back(gpureduce::OpName(op));
  return names;
}

std::string OpName(int wire_value) {
  const std::optional<Op> op = FromProto(wire_value);
  return op.has_value() ? std::string(gpureduce::OpName(*op)) : "unknown";
}

std::optional<v1::Op> ParseOpName(const std::string& name) {
  for (Op op : kAllOps) {
    if (gpureduce::OpName(op) == name) return ToProto(op);
  }
  return std::nullopt;
}

}  // namespace gpureduce::wire
