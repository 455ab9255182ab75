#include "client/cli/op_list.h"

#include <vector>

#include "absl/strings/str_cat.h"
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

TEST(OpListTest, TheNewOpsAndAFiveOpList) {
  EXPECT_THAT(*ParseOpList("nansum,nanprod,nanmin,nanmax,nanmean,nanargmin,nanargmax"),
              ElementsAre(v1::NANSUM, v1::NANPROD, v1::NANMIN, v1::NANMAX, v1::NANMEAN,
                          v1::NANARGMIN, v1::NANARGMAX));
  EXPECT_THAT(*ParseOpList("var,std,nanvar,nanstd"),
              ElementsAre(v1::VAR, v1::STD, v1::NANVAR, v1::NANSTD));
  EXPECT_THAT(*ParseOpList("sum,min,max,mean,std"),
              ElementsAre(v1::SUM, v1::MIN, v1::MAX, v1::MEAN, v1::STD));
  EXPECT_THAT(OpChoices(), HasSubstr("|nanstd}"));
}

TEST(DTypeFlagTest, EveryDTypeByNameAnyCase) {
  EXPECT_EQ(*ParseDTypeFlag("float32"), DType::kFloat32);
  EXPECT_EQ(*ParseDTypeFlag("float16"), DType::kFloat16);
  EXPECT_EQ(*ParseDTypeFlag("BFloat16"), DType::kBFloat16);
  EXPECT_EQ(*ParseDTypeFlag("float64"), DType::kFloat64);
  EXPECT_EQ(*ParseDTypeFlag("int32"), DType::kInt32);
  EXPECT_EQ(*ParseDTypeFlag("int64"), DType::kInt64);
}

TEST(DTypeFlagTest, AnUnknownDTypeNamesItAndTheChoices) {
  for (const char* bad : {"uint8", "", "f4", "float"}) {
    absl::StatusOr<DType> dtype = ParseDTypeFlag(bad);
    EXPECT_EQ(dtype.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(dtype.status().message(),
                HasSubstr(absl::StrCat("'", bad,
                                       "' is not a dtype: expected one of float32, "
                                       "float16, bfloat16, float64, int32, int64")));
  }
}

}  // namespace
}  // namespace gpureduce::cli
