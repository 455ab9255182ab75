// FlagSet's flags whose value may be left out (AddOptionalString, AddOptionalChoice): what a bare
// flag means, when it takes the next argument, and how help shows it.

#include <string>
#include <vector>

#include "common/flags.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpureduce {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class OptionalFlagTest : public ::testing::Test {
 protected:
  OptionalFlagTest() : flags_("tool", "tool [flags] [FILE]", "") {
    flags_.AddOptionalString("out", &out_, "-", "where the output goes", "FILE");
    flags_.AddOptionalChoice("kind", &kind_, {"system", "cuda"}, "system", "which memory");
    flags_.AddUint32("n", &n_, "a number");
  }

  FlagSet flags_;
  std::string out_;
  std::string kind_;
  uint32_t n_ = 0;
};

TEST_F(OptionalFlagTest, LeftOutTheyKeepTheirDefaults) {
  ASSERT_TRUE(flags_.Parse(std::vector<std::string>{"data.npy"}).ok());
  EXPECT_EQ(out_, "");
  EXPECT_EQ(kind_, "");
  EXPECT_THAT(flags_.positional(), ElementsAre("data.npy"));
}

TEST_F(OptionalFlagTest, BareTheyTakeTheirImplicitValueAndLeaveTheNextArgumentAlone) {
  ASSERT_TRUE(flags_.Parse({"--out", "data.npy", "--kind", "--n", "3"}).ok());
  EXPECT_EQ(out_, "-");
  EXPECT_EQ(kind_, "system");
  EXPECT_EQ(n_, 3u);
  EXPECT_THAT(flags_.positional(), ElementsAre("data.npy"));
  ASSERT_TRUE(flags_.Parse({"--kind", "-"}).ok()) << "'-' (stdin) stays an argument";
  EXPECT_THAT(flags_.positional(), ElementsAre("-"));
}

TEST_F(OptionalFlagTest, AValueAfterTheEqualsSignIsTheirs) {
  ASSERT_TRUE(flags_.Parse({"--out=report.json", "--kind=cuda"}).ok());
  EXPECT_EQ(out_, "report.json");
  EXPECT_EQ(kind_, "cuda");
  EXPECT_THAT(flags_.positional(), IsEmpty());
}

TEST_F(OptionalFlagTest, AChoiceFlagTakesTheNextArgumentOnlyWhenItIsAChoice) {
  ASSERT_TRUE(flags_.Parse({"--kind", "cuda", "system.npy"}).ok());
  EXPECT_EQ(kind_, "cuda");
  EXPECT_THAT(flags_.positional(), ElementsAre("system.npy"));
  ASSERT_TRUE(flags_.Parse({"--kind", "gpu"}).ok());
  EXPECT_EQ(kind_, "system");
  EXPECT_THAT(flags_.positional(), ElementsAre("gpu"));
}

TEST_F(OptionalFlagTest, AChoiceFlagRefusesAValueOutsideItsChoices) {
  const absl::Status parsed = flags_.Parse({"--kind=gpu"});
  EXPECT_FALSE(parsed.ok());
  EXPECT_THAT(parsed.message(), HasSubstr("{system|cuda}"));
}

TEST_F(OptionalFlagTest, HelpShowsTheValueAsOptional) {
  EXPECT_THAT(flags_.Help(), HasSubstr("--out[=FILE]"));
  EXPECT_THAT(flags_.Help(), HasSubstr("--kind[={system|cuda}]"));
}

TEST(OptionalChoiceRegistrationTest, AnImplicitValueOutsideTheChoicesIsAMistake) {
  std::string kind;
  FlagSet flags("tool", "tool", "");
  flags.AddOptionalChoice("kind", &kind, {"system", "cuda"}, "gpu", "which memory");
  const absl::Status parsed = flags.Parse(std::vector<std::string>{});
  EXPECT_FALSE(parsed.ok());
  EXPECT_THAT(parsed.message(), HasSubstr("\"gpu\""));
}

}  // namespace
}  // namespace gpureduce
