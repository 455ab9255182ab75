// The command-line parsers from raw bytes: FlagSet, ParseFlagValue for every type, and
// ParseByteSize / FormatByteSize. The input is lines: the first is a description for Help(), the
// second the name of one more flag to register (registration mistakes must surface as Parse's
// error), the rest the arguments. --threads also has an environment variable (set once, at
// start): it must hold unless the command line gives --threads, which wins, or asks for --help.
// Every refusal must be INVALID_ARGUMENT; parsing twice must give the same answer; each argument
// is also parsed as every flag type, and what parses must read back from its formatted form.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/byte_size.h"
#include "common/flag_values.h"
#include "common/flags.h"
#include "tests/fuzz/fuzz_support.h"

namespace gpureduce::fuzzing {
namespace {

using absl::StatusCode;

// Not GPUREDUCE_, so that a variable of the machine running the fuzzer cannot change its results.
constexpr char kEnvironmentPrefix[] = "GPUREDUCE_FUZZ_";

// One variable of every kind FlagSet binds, with the server's and the CLI's kinds of defaults.
struct Bound {
  std::string listen = "127.0.0.1:50051";
  std::string extra;
  bool verbose = false;
  int64_t offset = -3;
  uint64_t count = 1000003;
  uint32_t threads = 0;
  double fraction = 0.5;
  absl::Duration grace = absl::Seconds(5);
  uint64_t bytes = uint64_t{64} << 20;
  std::string backend = "auto";

  bool operator==(const Bound&) const = default;
};

void Register(FlagSet& flags, Bound& bound, absl::string_view extra_name) {
  flags.AddString("listen", &bound.listen, "address to listen on", "HOST:PORT");
  flags.AddBool("verbose", &bound.verbose, "log every request");
  flags.AddInt64("offset", &bound.offset, "a signed value");
  flags.AddUint64("count", &bound.count, "elements to send");
  flags.AddUint32("threads", &bound.threads, "worker threads; 0: one per core");
  flags.AddDouble("fraction", &bound.fraction, "a share");
  flags.AddDuration("grace-period", &bound.grace, "time to finish in-flight calls");
  flags.AddByteSize("max-request-bytes", &bound.bytes, "unary payload limit");
  flags.AddChoice("backend", &bound.backend, {"auto", "cpu", "cuda"}, "compute backend");
  flags.AddString(extra_name, &bound.extra, "a flag named by the input");
}

// Parses `args` with a fresh FlagSet; Help() must render whatever was registered.
absl::Status ParseOnce(absl::string_view description, absl::string_view extra_name,
                       const std::vector<std::string>& args, Bound& bound,
                       std::vector<std::string>& positional) {
  FlagSet flags("fuzz", "fuzz [flags] [FILE]", std::string(description));
  flags.SetEnvironmentPrefix(kEnvironmentPrefix);
  Register(flags, bound, extra_name);
  const absl::Status status = flags.Parse(args);
  CheckCode(status, {StatusCode::kInvalidArgument}, "FlagSet::Parse");
  (void)flags.Help();
  positional = flags.positional();
  GPUREDUCE_FUZZ_CHECK(positional.size() <= args.size(), "more positional arguments than given");
  return status;
}

void CheckByteSize(absl::string_view text) {
  const absl::StatusOr<uint64_t> size = ParseByteSize(text);
  CheckCode(size.status(), {StatusCode::kInvalidArgument}, "ParseByteSize");
  if (!size.ok()) return;
  const std::string formatted = FormatByteSize(*size);
  const absl::StatusOr<uint64_t> again = ParseByteSize(formatted);
  GPUREDUCE_FUZZ_CHECK(again.ok() && *again == *size,
                       absl::StrCat(text, " -> ", *size, " -> ", formatted));
}

// Every type's parser on `text`; what parses reads back from its formatted form.
void CheckValueParsers(absl::string_view text) {
  CheckByteSize(text);
  bool flag = false;
  CheckCode(ParseFlagValue(text, &flag), {StatusCode::kInvalidArgument}, "ParseFlagValue(bool)");
  int64_t signed_value = 0;
  if (ParseFlagValue(text, &signed_value).ok()) {
    int64_t again = 0;
    GPUREDUCE_FUZZ_CHECK(
        ParseFlagValue(absl::StrCat(signed_value), &again).ok() && again == signed_value, text);
  }
  uint64_t unsigned_value = 0;
  if (ParseFlagValue(text, &unsigned_value).ok()) {
    GPUREDUCE_FUZZ_CHECK(text[0] != '-' || unsigned_value == 0, text);
  }
  uint32_t small_value = 0;
  const absl::Status small = ParseFlagValue(text, &small_value);
  CheckCode(small, {StatusCode::kInvalidArgument}, "ParseFlagValue(uint32_t)");
  double real = 0;
  if (ParseFlagValue(text, &real).ok()) GPUREDUCE_FUZZ_CHECK(std::isfinite(real), text);
  absl::Duration duration;
  if (ParseFlagValue(text, &duration).ok()) {
    GPUREDUCE_FUZZ_CHECK(duration >= absl::ZeroDuration(), text);
  }
}

}  // namespace
}  // namespace gpureduce::fuzzing

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  setenv("GPUREDUCE_FUZZ_THREADS", "7", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using gpureduce::fuzzing::Bound;
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> lines = absl::StrSplit(input, '\n');
  const std::string description = lines.empty() ? "" : lines[0];
  const std::string extra_name = lines.size() < 2 ? "extra" : lines[1];
  const std::vector<std::string> args(lines.begin() + std::min<size_t>(lines.size(), 2),
                                      lines.end());

  Bound first;
  Bound second;
  std::vector<std::string> first_positional;
  std::vector<std::string> second_positional;
  const absl::Status status =
      gpureduce::fuzzing::ParseOnce(description, extra_name, args, first, first_positional);
  const absl::Status again =
      gpureduce::fuzzing::ParseOnce(description, extra_name, args, second, second_positional);
  GPUREDUCE_FUZZ_CHECK(status == again && first == second && first_positional == second_positional,
                       "the same arguments parsed differently");
  const bool threads_given = std::any_of(args.begin(), args.end(), [](const std::string& arg) {
    return arg.rfind("--threads", 0) == 0;
  });
  // --help prints and exits: the environment is not read then.
  const bool help_given = std::any_of(args.begin(), args.end(), [](const std::string& arg) {
    return arg == "-h" || arg == "--help";
  });
  GPUREDUCE_FUZZ_CHECK(!status.ok() || threads_given || help_given || first.threads == 7,
                       "GPUREDUCE_FUZZ_THREADS=7 was not applied");
  for (const std::string& arg : args) {
    gpureduce::fuzzing::CheckValueParsers(arg);
    // The value of a --flag=value too, as FlagSet hands it over.
    const size_t equals = arg.find('=');
    if (equals != std::string::npos) gpureduce::fuzzing::CheckValueParsers(arg.substr(equals + 1));
  }
  // Formatting any size reads back.
  if (size >= sizeof(uint64_t)) {
    uint64_t bytes = 0;
    std::memcpy(&bytes, data, sizeof(bytes));
    gpureduce::fuzzing::CheckByteSize(gpureduce::FormatByteSize(bytes));
  }
  return 0;
}
