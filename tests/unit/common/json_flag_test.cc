// --json as every tool declares it (common/json_flag.h): bare or "-" is stdout in place of the
// text, =FILE a file, and `--json FILE` for the tools that take no operand.

#include "common/json_flag.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpureduce {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string ReadAll(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

struct Parsed {
  absl::Status status;
  JsonFlag json;
  std::vector<std::string> operands;
};

Parsed Parse(std::vector<std::string> args,
             JsonFlag::Operands operands = JsonFlag::Operands::kTaken) {
  Parsed out;
  FlagSet flags("tool", "tool [flags]", "");
  out.json.Register(flags, "the report", operands);
  out.status = flags.Parse(args);
  out.operands = flags.positional();
  return out;
}

TEST(JsonFlagTest, EverySpellingMeansWhatItSays) {
  const Parsed none = Parse({});
  ASSERT_TRUE(none.status.ok());
  EXPECT_FALSE(none.json.requested());
  EXPECT_FALSE(none.json.on_stdout());

  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--json"}, std::vector<std::string>{"--json=-"}}) {
    const Parsed stdout_json = Parse(args);
    ASSERT_TRUE(stdout_json.status.ok());
    EXPECT_TRUE(stdout_json.json.requested()) << args.front();
    EXPECT_TRUE(stdout_json.json.on_stdout()) << args.front();
  }

  const Parsed file = Parse({"--json=out.json"});
  ASSERT_TRUE(file.status.ok());
  EXPECT_TRUE(file.json.requested());
  EXPECT_FALSE(file.json.on_stdout());
  EXPECT_EQ(file.json.destination(), "out.json");
}

TEST(JsonFlagTest, ABareJsonLeavesTheInputFileAnOperand) {
  const Parsed parsed = Parse({"--json", "data.npy"});
  ASSERT_TRUE(parsed.status.ok());
  EXPECT_TRUE(parsed.json.on_stdout());
  EXPECT_THAT(parsed.operands, ElementsAre("data.npy"));
}

TEST(JsonFlagTest, AToolWithoutOperandsTakesTheArgumentAfterABareJsonAsItsValue) {
  constexpr JsonFlag::Operands kNone = JsonFlag::Operands::kNone;
  Parsed parsed = Parse({"--json", "ladder.json", "--csv-free"}, kNone);
  EXPECT_FALSE(parsed.status.ok()) << "--csv-free is an unknown flag, not the file";
  parsed = Parse({"--json", "ladder.json"}, kNone);
  ASSERT_TRUE(parsed.status.ok());
  EXPECT_EQ(parsed.json.destination(), "ladder.json");
  EXPECT_TRUE(parsed.operands.empty());

  const Parsed dash = Parse({"--json", "-"}, kNone);
  ASSERT_TRUE(dash.status.ok());
  EXPECT_TRUE(dash.json.on_stdout());
  EXPECT_TRUE(dash.operands.empty());

  // Only the argument right after a bare --json: any other stays an operand, for the tool to
  // refuse.
  const Parsed given_file = Parse({"--json=a.json", "b.json"}, kNone);
  EXPECT_EQ(given_file.json.destination(), "a.json");
  EXPECT_THAT(given_file.operands, ElementsAre("b.json"));
  const Parsed stray = Parse({"oops", "--json"}, kNone);
  EXPECT_TRUE(stray.json.on_stdout());
  EXPECT_THAT(stray.operands, ElementsAre("oops"));
  const Parsed before_flag = Parse({"--json", "--json=x.json"}, kNone);
  ASSERT_TRUE(before_flag.status.ok());
  EXPECT_EQ(before_flag.json.destination(), "x.json") << "a flag is never the value";
}

TEST(JsonFlagTest, WritesReplaceTheFileOnceThenAddToIt) {
  const std::string path = ::testing::TempDir() + "json_flag_test.json";
  { std::ofstream(path) << "stale contents\n"; }
  Parsed parsed = Parse({"--json=" + path});
  ASSERT_TRUE(parsed.json.Write("{\"op\":\"sum\"}\n").ok());
  ASSERT_TRUE(parsed.json.Write("{\"op\":\"max\"}\n").ok());
  EXPECT_EQ(ReadAll(path), "{\"op\":\"sum\"}\n{\"op\":\"max\"}\n");
  std::remove(path.c_str());
}

TEST(JsonFlagTest, AnUnwritableFileIsAnErrorNamingIt) {
  Parsed parsed = Parse({"--json=/no/such/folder/out.json"});
  const absl::Status written = parsed.json.Write("{}\n");
  EXPECT_FALSE(written.ok());
  EXPECT_THAT(written.message(), HasSubstr("/no/such/folder/out.json"));
}

}  // namespace
}  // namespace gpureduce
