#include "client/cli/op_list.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpureduce::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(OpListTest, OneOpOrAListInTheOrderGiven) {
  EXPECT_THAT(*ParseOpList("sum"), ElementsAre(v1::SUM));
  EXPECT_THAT(*ParseOpList("argmax"), ElementsAre(v1::ARGMAX));
  EXPECT_THAT(*ParseOpList("max,sum, min"), ElementsAre(v1::MAX, v1::SUM, v1::MIN));
  EXPECT_EQ(ParseOpList("sum,prod,min,max,mean,sum_squares,argmin,argmax")->size(), 8u);
}

TEST(OpListTest, UnknownEmptyOrRepeatedOpsAreErrorsNamingTheEntry) {
  for (const char* bad : {"median", "sum,median", "", "sum,", "SUM", "op_unspecified"}) {
    absl::StatusOr<std::vector<v1::Op>> ops = ParseOpList(bad);
    EXPECT_EQ(ops.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(ops.status().message(), HasSubstr(OpChoices())) << bad;
  }
  EXPECT_THAT(ParseOpList("sum,min,sum").status().message(), HasSubstr("sum is listed twice"));
}

}  // namespace
}  // namespace gpureduce::cli
