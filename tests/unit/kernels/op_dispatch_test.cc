// DispatchOp: each op reaches the reduction it computes, ops that reduce alike share one
// instantiation, and a value outside the enum is reported rather than reduced as something else.

#include "kernels/op_dispatch.h"

#include <set>
#include <string>
#include <typeinfo>

#include "common/reduction/op_name.h"
#include "gtest/gtest.h"

namespace gpureduce::kernels {
namespace {

struct Seen {
  ReductionKind kind;
  bool squares;
  bool less;
  const std::type_info* type;
};

Seen Describe(Op op) {
  const Seen invalid{ReductionKind::kSum, false, false, nullptr};
  return DispatchOp(op, invalid, [](auto reduction) {
    using ReductionT = decltype(reduction);
    return Seen{ReductionT::kKind, ReductionT::kSquares, ReductionT::kLess, &typeid(ReductionT)};
  });
}

TEST(OpDispatchTest, EveryOpReachesItsReduction) {
  struct Expected {
    Op op;
    ReductionKind kind;
    bool squares;
    bool less;
  };
  const Expected expected[] = {
      {Op::kSum, ReductionKind::kSum, false, false},
      {Op::kMean, ReductionKind::kSum, false, false},
      {Op::kSumSquares, ReductionKind::kSum, true, false},
      {Op::kProd, ReductionKind::kProduct, false, false},
      {Op::kMin, ReductionKind::kExtreme, false, true},
      {Op::kMax, ReductionKind::kExtreme, false, false},
      {Op::kArgMin, ReductionKind::kArgExtreme, false, true},
      {Op::kArgMax, ReductionKind::kArgExtreme, false, false},
  };
  ASSERT_EQ(std::size(expected), std::size(kClassicOps)) << "an op without an expectation here";
  for (const Expected& e : expected) {
    SCOPED_TRACE(std::string(OpName(e.op)));
    const Seen seen = Describe(e.op);
    ASSERT_NE(seen.type, nullptr);
    EXPECT_EQ(seen.kind, e.kind);
    EXPECT_EQ(seen.squares, e.squares);
    EXPECT_EQ(seen.less, e.less);
  }
}

// Seven distinct reductions for eight ops: MEAN is SUM until Finalize, so a kernel family
// instantiates nothing for it.
TEST(OpDispatchTest, OnlyMeanSharesAReduction) {
  std::set<const std::type_info*> types;
  for (Op op : kClassicOps) types.insert(Describe(op).type);
  EXPECT_EQ(types.size(), std::size(kClassicOps) - 1);
  EXPECT_EQ(Describe(Op::kMean).type, Describe(Op::kSum).type);
}

TEST(OpDispatchTest, AValueOutsideTheEnumReturnsTheInvalidResult) {
  for (int value : {0, 9, -1}) {
    EXPECT_EQ(Describe(static_cast<Op>(value)).type, nullptr) << value;
  }
}

}  // namespace
}  // namespace gpureduce::kernels
