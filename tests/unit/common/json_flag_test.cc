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

Parsed Parse(std::vector<std::string> args) {
  Parsed out;
  FlagSet flags("tool", "tool [flags]", "");
  out.json.Register(flags, "the report");
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

TEST(JsonFlagTest, AToolWithoutOperandsTakesTheOneAfterABareJsonAsTheFile) {
  Parsed parsed = Parse({"--json", "ladder.json"});
  ASSERT_TRUE(parsed.status.ok());
  EXPECT_TRUE(parsed.json.AdoptFileOperand(parsed.operands));
  EXPECT_EQ(parsed.json.destination(), "ladder.json");

  Parsed given_file = Parse({"--json=a.json", "b.json"});
  EXPECT_FALSE(given_file.json.AdoptFileOperand(given_file.operands));
  EXPECT_EQ(given_file.json.destination(), "a.json");
  Parsed two = Parse({"--json", "a", "b"});
  EXPECT_FALSE(two.json.AdoptFileOperand(two.operands));
  EXPECT_TRUE(two.json.on_stdout());
  Parsed not_given = Parse({"a.json"});
  EXPECT_FALSE(not_given.json.AdoptFileOperand(not_given.operands));
  EXPECT_FALSE(not_given.json.requested());
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
