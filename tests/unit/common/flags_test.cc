#include "common/flags.h"

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpureduce {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// Sets environment variables for one test and restores what was there before.
class ScopedEnvironment {
 public:
  // A null value unsets the variable.
  explicit ScopedEnvironment(std::vector<std::pair<std::string, const char*>> variables) {
    for (const auto& [name, value] : variables) {
      const char* old = std::getenv(name.c_str());
      saved_.emplace_back(name, old == nullptr ? std::nullopt : std::optional<std::string>(old));
      Set(name, value);
    }
  }
  ~ScopedEnvironment() {
    for (const auto& [name, old] : saved_) Set(name, old.has_value() ? old->c_str() : nullptr);
  }

 private:
  static void Set(const std::string& name, const char* value) {
    if (value == nullptr) {
      unsetenv(name.c_str());
    } else {
      setenv(name.c_str(), value, 1);
    }
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// One flag of every kind, bound to members so each test starts from known defaults.
class FlagsTest : public ::testing::Test {
 protected:
  FlagsTest() : flags_("gpureduce reduce", "gpureduce reduce [flags] [FILE|-]", kDescription) {
    flags_.AddString("server", &server_, "address of the server", "HOST:PORT");
    flags_.AddBool("verbose", &verbose_, "log every request");
    flags_.AddBool("verify", &verify_, "check the result on the CPU");
    flags_.AddInt64("offset", &offset_, "signed offset added to the result");
    flags_.AddUint64("count", &count_, "number of elements");
    flags_.AddUint32("threads", &threads_, "worker threads");
    flags_.AddDouble("tolerance", &tolerance_, "relative error allowed");
    flags_.AddByteSize("chunk", &chunk_, "bytes per chunk");
    flags_.AddDuration("timeout", &timeout_, "deadline per request");
    flags_.AddChoice("op", &op_, {"sum", "min", "max"}, "reduction operator");
  }

  absl::Status Parse(const std::vector<std::string>& args) { return flags_.Parse(args); }

  // Expects Parse to fail with InvalidArgument and every `parts` in the message.
  void ExpectError(const std::vector<std::string>& args, const std::vector<std::string>& parts) {
    absl::Status status = Parse(args);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument)
        << "args: " << ::testing::PrintToString(args);
    for (const std::string& part : parts) {
      EXPECT_THAT(std::string(status.message()), HasSubstr(part)) << ::testing::PrintToString(args);
    }
  }

  static constexpr char kDescription[] =
      "Reduces a file of float32 values on the server's GPU and prints the result.";

  std::string server_ = "localhost:50051";
  bool verbose_ = false;
  bool verify_ = true;
  int64_t offset_ = -3;
  uint64_t count_ = 1000;
  uint32_t threads_ = 4;
  double tolerance_ = 0.001;
  uint64_t chunk_ = uint64_t{64} << 20;
  absl::Duration timeout_ = absl::Seconds(30);
  std::string op_ = "sum";
  FlagSet flags_;
};

TEST_F(FlagsTest, DefaultsSurviveAnEmptyCommandLine) {
  ASSERT_TRUE(Parse({}).ok());
  EXPECT_EQ(server_, "localhost:50051");
  EXPECT_FALSE(verbose_);
  EXPECT_EQ(chunk_, uint64_t{64} << 20);
  EXPECT_TRUE(flags_.positional().empty());
  EXPECT_FALSE(flags_.help_requested());
}

TEST_F(FlagsTest, ParsesEveryTypeWithEquals) {
  ASSERT_TRUE(Parse({"--server=gpu7:9000", "--verbose=true", "--verify=0", "--offset=-42",
                     "--count=18446744073709551615", "--threads=4294967295", "--tolerance=1e-6",
                     "--chunk=1MiB", "--timeout=500ms", "--op=max"})
                  .ok());
  EXPECT_EQ(server_, "gpu7:9000");
  EXPECT_TRUE(verbose_);
  EXPECT_FALSE(verify_);
  EXPECT_EQ(offset_, -42);
  EXPECT_EQ(count_, UINT64_MAX);
  EXPECT_EQ(threads_, UINT32_MAX);
  EXPECT_DOUBLE_EQ(tolerance_, 1e-6);
  EXPECT_EQ(chunk_, uint64_t{1} << 20);
  EXPECT_EQ(timeout_, absl::Milliseconds(500));
  EXPECT_EQ(op_, "max");
}

TEST_F(FlagsTest, ParsesSeparateValues) {
  ASSERT_TRUE(Parse({"--server", "h:1", "--offset", "-7", "--chunk", "4GiB", "--timeout", "1m",
                     "--op", "min", "--tolerance", "0.5"})
                  .ok());
  EXPECT_EQ(server_, "h:1");
  EXPECT_EQ(offset_, -7);  // A negative number is a value, not a flag.
  EXPECT_EQ(chunk_, uint64_t{4} << 30);
  EXPECT_EQ(timeout_, absl::Minutes(1));
  EXPECT_EQ(op_, "min");
  EXPECT_DOUBLE_EQ(tolerance_, 0.5);
  EXPECT_TRUE(flags_.positional().empty());
}

TEST_F(FlagsTest, StringMayBeEmptyOrContainEquals) {
  ASSERT_TRUE(Parse({"--server=a=b"}).ok());
  EXPECT_EQ(server_, "a=b");
  ASSERT_TRUE(Parse({"--server="}).ok());
  EXPECT_EQ(server_, "");
}

TEST_F(FlagsTest, BoolForms) {
  ASSERT_TRUE(Parse({"--verbose", "--no-verify"}).ok());
  EXPECT_TRUE(verbose_);
  EXPECT_FALSE(verify_);
  ASSERT_TRUE(Parse({"--verbose=false", "--verify=TRUE"}).ok());
  EXPECT_FALSE(verbose_);
  EXPECT_TRUE(verify_);
  ASSERT_TRUE(Parse({"--verbose=1", "--verify=False"}).ok());
  EXPECT_TRUE(verbose_);
  EXPECT_FALSE(verify_);
}

TEST_F(FlagsTest, BoolDoesNotConsumeTheNextArgument) {
  ASSERT_TRUE(Parse({"--verbose", "true"}).ok());
  EXPECT_TRUE(verbose_);
  EXPECT_THAT(flags_.positional(), ElementsAre("true"));
}

TEST_F(FlagsTest, BadBools) {
  ExpectError({"--verbose=yes"}, {"--verbose", "\"yes\"", "true, false, 1 or 0"});
  ExpectError({"--no-verbose=true"}, {"--no-verbose", "takes no value"});
  ExpectError({"--no-threads"}, {"--no-threads", "--threads is not a boolean"});
}

TEST_F(FlagsTest, LastValueWins) {
  ASSERT_TRUE(Parse({"--threads=2", "--threads", "8", "--verbose", "--no-verbose"}).ok());
  EXPECT_EQ(threads_, 8u);
  EXPECT_FALSE(verbose_);
}

TEST_F(FlagsTest, RejectsMalformedIntegers) {
  for (const char* value :
       {"12x", "", "x", " 12", "12 ", "+5", "1.5", "1e3", "0x10", "1_000", "--", "-"}) {
    ExpectError({std::string("--threads=") + value},
                {"--threads", "an integer in [0, 4294967295]"});
    ExpectError({std::string("--count=") + value}, {"--count", "[0, 18446744073709551615]"});
    ExpectError({std::string("--offset=") + value},
                {"--offset", "[-9223372036854775808, 9223372036854775807]"});
  }
  ExpectError({"--threads=12x"}, {"invalid value \"12x\" for --threads: expected an integer"});
}

TEST_F(FlagsTest, RejectsOutOfRangeIntegers) {
  ExpectError({"--threads=-1"}, {"--threads", "out of range", "[0, 4294967295]"});
  ExpectError({"--threads=4294967296"}, {"--threads", "out of range"});
  ExpectError({"--count=-5"}, {"--count", "out of range"});
  ExpectError({"--count=18446744073709551616"}, {"--count", "out of range"});
  ExpectError({"--offset=9223372036854775808"}, {"--offset", "out of range"});
  ExpectError({"--offset=-9223372036854775809"}, {"--offset", "out of range"});
  EXPECT_TRUE(Parse({"--offset=-9223372036854775808"}).ok());
  EXPECT_EQ(offset_, INT64_MIN);
  EXPECT_EQ(threads_, 4u) << "a failed parse must not change the variable";
}

TEST_F(FlagsTest, RejectsBadDoubles) {
  for (const char* value : {"abc", "1.5x", "", "nan", "inf", "1e999", "+1"}) {
    ExpectError({std::string("--tolerance=") + value}, {"--tolerance", "finite number"});
  }
}

TEST_F(FlagsTest, RejectsBadByteSizes) {
  ExpectError({"--chunk=12x"}, {"--chunk", "\"12x\"", "KiB"});
  ExpectError({"--chunk=99999999999GiB"}, {"--chunk", "too large"});
  ExpectError({"--chunk=-1"}, {"--chunk"});
}

TEST_F(FlagsTest, RejectsBadDurations) {
  ExpectError({"--timeout=30"}, {"--timeout", "500ms, 30s"});
  ExpectError({"--timeout=soon"}, {"--timeout", "duration"});
  ExpectError({"--timeout=-1s"}, {"--timeout", "negative"});
  ASSERT_TRUE(Parse({"--timeout=inf"}).ok());
  EXPECT_EQ(timeout_, absl::InfiniteDuration());
}

TEST_F(FlagsTest, ChoiceErrorListsTheChoices) {
  ExpectError({"--op=avg"}, {"--op", "\"avg\"", "{sum|min|max}"});
  ExpectError({"--op=SUM"}, {"{sum|min|max}"});  // Choices are case-sensitive.
  EXPECT_EQ(op_, "sum");
}

TEST_F(FlagsTest, MissingValues) {
  ExpectError({"--threads"}, {"missing value for --threads", "--threads=N"});
  ExpectError({"--server"}, {"missing value for --server", "--server=HOST:PORT"});
  // A following flag is treated as a forgotten value, not swallowed.
  ExpectError({"--server", "--verbose"}, {"missing value for --server"});
  EXPECT_FALSE(verbose_);
}

TEST_F(FlagsTest, UnknownFlagSuggestsTheClosest) {
  ExpectError({"--opp=sum"}, {"unknown flag --opp; did you mean --op?"});
  ExpectError({"--treads", "4"}, {"unknown flag --treads; did you mean --threads?"});
  ExpectError({"--no-verbos"}, {"did you mean --no-verbose?"});
  ExpectError({"--hlep"}, {"did you mean --help?"});
  ExpectError({"-verbose"}, {"unknown flag -verbose; did you mean --verbose?"});
  absl::Status status = Parse({"--frobnicate"});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "unknown flag --frobnicate");
}

TEST_F(FlagsTest, CollectsPositionalsIncludingStdin) {
  ASSERT_TRUE(Parse({"a.bin", "--verbose", "-", "b.bin", "--threads", "2", "c"}).ok());
  EXPECT_THAT(flags_.positional(), ElementsAre("a.bin", "-", "b.bin", "c"));
  EXPECT_EQ(threads_, 2u);
}

TEST_F(FlagsTest, DoubleDashEndsFlags) {
  ASSERT_TRUE(Parse({"--verbose", "--", "--threads=9", "-", "-h", "--"}).ok());
  EXPECT_TRUE(verbose_);
  EXPECT_EQ(threads_, 4u);
  EXPECT_FALSE(flags_.help_requested());
  EXPECT_THAT(flags_.positional(), ElementsAre("--threads=9", "-", "-h", "--"));
}

TEST_F(FlagsTest, HelpIsRequestedNotAnError) {
  ASSERT_TRUE(Parse({"-h"}).ok());
  EXPECT_TRUE(flags_.help_requested());
  ASSERT_TRUE(Parse({"x", "--help", "--threads=3"}).ok());
  EXPECT_TRUE(flags_.help_requested());
  EXPECT_EQ(threads_, 3u);
  ASSERT_TRUE(Parse({"x"}).ok());
  EXPECT_FALSE(flags_.help_requested()) << "Parse resets the previous state";
  EXPECT_THAT(flags_.positional(), ElementsAre("x"));
  ExpectError({"--help=1"}, {"--help takes no value"});
}

TEST_F(FlagsTest, ParsesArgvFromFirst) {
  const char* argv[] = {"gpureduce", "reduce", "--threads=6", "-"};
  ASSERT_TRUE(flags_.Parse(4, argv, 2).ok());
  EXPECT_EQ(threads_, 6u);
  EXPECT_THAT(flags_.positional(), ElementsAre("-"));
  EXPECT_EQ(flags_.name(), "gpureduce reduce");
}

TEST_F(FlagsTest, HelpListsEveryFlagWithDefaultAndHelp) {
  const std::string help = flags_.Help();
  EXPECT_THAT(help, HasSubstr("Usage: gpureduce reduce [flags] [FILE|-]\n"));
  EXPECT_THAT(help, HasSubstr(kDescription));
  for (const char* part : {"--server=HOST:PORT",
                           "address of the server (default: \"localhost:50051\")",
                           "--verbose ",
                           "log every request (default: false)",
                           "check the result on the CPU (default: true)",
                           "--offset=N",
                           "(default: -3)",
                           "--count=N",
                           "number of elements (default: 1000)",
                           "--threads=N",
                           "worker threads (default: 4)",
                           "--tolerance=X",
                           "relative error allowed (default: 0.001)",
                           "--chunk=SIZE",
                           "bytes per chunk (default: 64MiB)",
                           "--timeout=DURATION",
                           "deadline per request (default: 30s)",
                           "--op={sum|min|max}",
                           "reduction operator (default: sum)",
                           "-h, --help"}) {
    EXPECT_THAT(help, HasSubstr(part)) << help;
  }
}

TEST_F(FlagsTest, HelpAlignsAndStaysNarrow) {
  flags_.AddString("a-very-long-flag-name-for-layout", &server_,
                   "a long help text that goes on and on to make sure that it wraps before the "
                   "hundredth column instead of running off the edge of a terminal window");
  const std::string help = flags_.Help();
  size_t help_column = std::string::npos;
  for (absl::string_view line : absl::StrSplit(help, '\n')) {
    EXPECT_LE(line.size(), 100u) << line;
    if (absl::StartsWith(line, "  --")) {
      // Every row whose flag fits the column starts its help at the same column.
      const size_t gap = line.find("   ");
      if (gap == absl::string_view::npos) continue;  // The long flag sits on its own line.
      const size_t column = line.find_first_not_of(' ', gap);
      if (help_column == std::string::npos) help_column = column;
      EXPECT_EQ(column, help_column) << line;
    }
  }
  EXPECT_THAT(help, HasSubstr("  --a-very-long-flag-name-for-layout=STRING\n"));
}

TEST(FlagSetRegistrationTest, MistakesSurfaceFromParse) {
  bool a = false;
  bool b = false;
  std::string op = "avg";
  FlagSet duplicate("t", "t", "");
  duplicate.AddBool("x", &a, "");
  duplicate.AddBool("x", &b, "");
  EXPECT_THAT(duplicate.Parse({}).message(), HasSubstr("--x\" is registered twice"));

  FlagSet reserved("t", "t", "");
  reserved.AddBool("help", &a, "");
  EXPECT_THAT(reserved.Parse({}).message(), HasSubstr("reserved"));

  FlagSet malformed("t", "t", "");
  malformed.AddBool("--x", &a, "");
  EXPECT_THAT(malformed.Parse({}).message(), HasSubstr("not a valid flag name"));

  FlagSet bad_default("t", "t", "");
  bad_default.AddChoice("op", &op, {"sum", "min"}, "");
  EXPECT_THAT(bad_default.Parse({}).message(),
              HasSubstr("default \"avg\" is not one of {sum|min}"));
}

// Every variable the fixture's flags could read, unset unless a test sets it.
std::vector<std::pair<std::string, const char*>> Environment(
    std::vector<std::pair<std::string, const char*>> set) {
  std::vector<std::pair<std::string, const char*>> all = {
      {"GPUREDUCE_SERVER", nullptr},  {"GPUREDUCE_VERBOSE", nullptr},
      {"GPUREDUCE_VERIFY", nullptr},  {"GPUREDUCE_NO_VERIFY", nullptr},
      {"GPUREDUCE_THREADS", nullptr}, {"GPUREDUCE_CHUNK", nullptr},
      {"GPUREDUCE_TIMEOUT", nullptr}, {"GPUREDUCE_OP", nullptr},
      {"GPUREDUCE_HELP", nullptr}};
  all.insert(all.end(), set.begin(), set.end());  // Later entries win.
  return all;
}

TEST_F(FlagsTest, EnvironmentSuppliesWhatTheCommandLineLacks) {
  ScopedEnvironment env(Environment({{"GPUREDUCE_SERVER", "gpu7:9000"},
                                     {"GPUREDUCE_VERBOSE", "1"},
                                     {"GPUREDUCE_VERIFY", "false"},
                                     {"GPUREDUCE_CHUNK", "4KiB"},
                                     {"GPUREDUCE_TIMEOUT", "2s"},
                                     {"GPUREDUCE_OP", "max"}}));
  flags_.SetEnvironmentPrefix(kEnvironmentPrefix);
  ASSERT_TRUE(Parse({"x"}).ok());
  EXPECT_EQ(server_, "gpu7:9000");
  EXPECT_TRUE(verbose_);
  EXPECT_FALSE(verify_);
  EXPECT_EQ(chunk_, 4096u);
  EXPECT_EQ(timeout_, absl::Seconds(2));
  EXPECT_EQ(op_, "max");
  EXPECT_THAT(flags_.positional(), ElementsAre("x"));
}

TEST_F(FlagsTest, CommandLineWinsOverEnvironment) {
  ScopedEnvironment env(Environment({{"GPUREDUCE_SERVER", "gpu7:9000"},
                                     {"GPUREDUCE_VERBOSE", "true"},
                                     {"GPUREDUCE_THREADS", "not a number"}}));
  flags_.SetEnvironmentPrefix(kEnvironmentPrefix);
  // A malformed variable is not read when the command line gives the flag.
  ASSERT_TRUE(Parse({"--server=h:1", "--no-verbose", "--threads", "2"}).ok());
  EXPECT_EQ(server_, "h:1");
  EXPECT_FALSE(verbose_);
  EXPECT_EQ(threads_, 2u);
}

TEST_F(FlagsTest, MalformedEnvironmentValueNamesTheVariable) {
  ScopedEnvironment env(Environment({{"GPUREDUCE_CHUNK", "12x"}}));
  flags_.SetEnvironmentPrefix(kEnvironmentPrefix);
  ExpectError({}, {"GPUREDUCE_CHUNK: invalid value \"12x\" for --chunk", "KiB"});
  ScopedEnvironment bad_bool(Environment({{"GPUREDUCE_VERBOSE", "yes"}}));
  ExpectError({}, {"GPUREDUCE_VERBOSE: invalid value \"yes\" for --verbose", "true, false"});
  EXPECT_EQ(chunk_, uint64_t{64} << 20);
}

TEST_F(FlagsTest, EnvironmentIsReadOnlyWithAPrefixAndNeverForHelpOrNegations) {
  ScopedEnvironment env(Environment({{"GPUREDUCE_SERVER", "gpu7:9000"},
                                     {"GPUREDUCE_HELP", "1"},
                                     {"GPUREDUCE_NO_VERIFY", "1"},
                                     {"GPUREDUCE_OP", ""}}));
  ASSERT_TRUE(Parse({}).ok());
  EXPECT_EQ(server_, "localhost:50051") << "no prefix, no environment";
  flags_.SetEnvironmentPrefix(kEnvironmentPrefix);
  ASSERT_TRUE(Parse({}).ok());
  EXPECT_EQ(server_, "gpu7:9000");
  EXPECT_FALSE(flags_.help_requested());
  EXPECT_TRUE(verify_);
  EXPECT_EQ(op_, "sum") << "an empty variable counts as unset";
}

TEST_F(FlagsTest, HelpShowsEachFlagsVariable) {
  EXPECT_THAT(flags_.Help(), Not(HasSubstr("[env ")));
  flags_.SetEnvironmentPrefix(kEnvironmentPrefix);
  const std::string help = flags_.Help();
  EXPECT_THAT(help, HasSubstr("(default: \"localhost:50051\") [env GPUREDUCE_SERVER]"));
  EXPECT_THAT(help, HasSubstr("log every request (default: false) [env GPUREDUCE_VERBOSE]"));
  EXPECT_THAT(help, HasSubstr("show this help and exit\n"));
  EXPECT_THAT(help, Not(HasSubstr("NO_VERBOSE")));
}

}  // namespace
}  // namespace gpureduce
