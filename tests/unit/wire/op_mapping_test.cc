// The wire <-> domain op mapping both ends use: every op there and back, by the wire's own names,
// and the values the wire may carry that name no op.

#include "wire/op_mapping.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "common/reduction/op_name.h"
#include "gtest/gtest.h"

namespace gpureduce::wire {
namespace {

TEST(OpMappingTest, EveryOpGoesToTheWireOpOfItsNameAndBack) {
  std::set<int> seen;
  for (Op op : kAllOps) {
    const v1::Op wire = ToProto(op);
    EXPECT_EQ(absl::AsciiStrToLower(v1::Op_Name(wire)), OpName(op));
    EXPECT_EQ(static_cast<int>(wire), static_cast<int>(op)) << "logs and the wire share numbers";
    EXPECT_EQ(FromProto(wire), op) << OpName(op);
    seen.insert(wire);
  }
  EXPECT_EQ(seen.size(), std::size(kAllOps)) << "two ops went to one wire op";
}

TEST(OpMappingTest, EveryWireOpButUnspecifiedHasADomainOp) {
  for (int value = v1::Op_MIN; value <= v1::Op_MAX; ++value) {
    if (!v1::Op_IsValid(value)) continue;
    const std::optional<Op> op = FromProto(value);
    if (value == v1::OP_UNSPECIFIED) {
      EXPECT_FALSE(op.has_value());
      continue;
    }
    ASSERT_TRUE(op.has_value()) << v1::Op_Name(static_cast<v1::Op>(value));
    EXPECT_EQ(ToProto(*op), value);
  }
}

TEST(OpMappingTest, NumbersTheWireDoesNotKnowNameNoOp) {
  EXPECT_FALSE(FromProto(v1::Op_MAX + 1).has_value());
  EXPECT_FALSE(FromProto(-1).has_value());
  EXPECT_FALSE(FromProto(1 << 20).has_value());
}

TEST(OpMappingTest, TheToolsNamesAreTheDomainsAndParseBackExactly) {
  const std::vector<std::string> names = OpNames();
  ASSERT_EQ(names.size(), std::size(kAllOps));
  for (size_t i = 0; i < names.size(); ++i) {
    const v1::Op wire = ToProto(kAllOps[i]);
    EXPECT_EQ(names[i], OpName(kAllOps[i]));
    EXPECT_EQ(OpName(static_cast<int>(wire)), names[i]);
    EXPECT_EQ(ParseOpName(names[i]), wire) << names[i];
    EXPECT_FALSE(ParseOpName(absl::AsciiStrToUpper(names[i])).has_value())
        << "the tools spell ops in lower case only";
  }
  EXPECT_EQ(OpName(v1::OP_UNSPECIFIED), "unknown");
  EXPECT_EQ(OpName(v1::Op_MAX + 1), "unknown");
  EXPECT_FALSE(ParseOpName("median").has_value());
  EXPECT_FALSE(ParseOpName("").has_value());
}

}  // namespace
}  // namespace gpureduce::wire
