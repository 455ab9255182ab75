#pragma once

// A small GNU-style long-flag parser shared by the server binary and the CLI tools.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace gpureduce {

// The prefix gpureduce-server passes to SetEnvironmentPrefix: --foo-bar may also come from
// GPUREDUCE_FOO_BAR (docs/deploy.md).
inline constexpr char kEnvironmentPrefix[] = "GPUREDUCE_";

// Binds `--name` flags to caller-owned variables, parses a command line into them and renders
// --help. Accepted forms: `--name=value`, `--name value`, `--name` / `--no-name` for bools,
// `-h` / `--help`, and `--` to end flags. Everything else, including a lone "-" (stdin), is a
// positional argument. A flag given twice keeps the last value.
//
// Each Add* records the variable's current value as the default shown by Help(); `placeholder`
// names the value there (e.g. "HOST:PORT") and defaults to one per type. Registration mistakes
// (a duplicate or malformed name, a default outside the choices) surface as Parse's error.
// The bound variables must outlive the FlagSet.
class FlagSet {
 public:
  // `name` is the program or command ("gpureduce reduce"), for callers' error prefixes;
  // `synopsis` is the usage line without "Usage: " (e.g. "gpureduce reduce [flags] [FILE|-]");
  // `description` is a paragraph shown under it, wrapped to the help width.
  FlagSet(std::string name, std::string synopsis, std::string description);

  void AddString(absl::string_view name, std::string* value, absl::string_view help,
                 absl::string_view placeholder = "STRING");
  // Bools, integers, doubles and durations accept what ParseFlagValue (flag_values.h) accepts:
  // true/false/1/0; strict decimal integers within the type's range; finite numbers;
  // non-negative absl::ParseDuration text ("500ms", "30s", "1m").
  void AddBool(absl::string_view name, bool* value, absl::string_view help);
  void AddInt64(absl::string_view name, int64_t* value, absl::string_view help,
                absl::string_view placeholder = "N");
  void AddUint64(absl::string_view name, uint64_t* value, absl::string_view help,
                 absl::string_view placeholder = "N");
  void AddUint32(absl::string_view name, uint32_t* value, absl::string_view help,
                 absl::string_view placeholder = "N");
  void AddDouble(absl::string_view name, double* value, absl::string_view help,
                 absl::string_view placeholder = "X");
  void AddDuration(absl::string_view name, absl::Duration* value, absl::string_view help,
                   absl::string_view placeholder = "DURATION");
  // ParseByteSize syntax ("4096", "64KiB", "1MB"); the default is shown as FormatByteSize.
  void AddByteSize(absl::string_view name, uint64_t* value, absl::string_view help,
                   absl::string_view placeholder = "SIZE");
  // The value must be one of `choices`; the placeholder is "{a|b|c}". An empty default is allowed
  // (meaning "not chosen"); any other default must be one of the choices.
  void AddChoice(absl::string_view name, std::string* value, std::vector<std::string> choices,
                 absl::string_view help);
  // Flags whose value may be left out: a bare `--name` means `implicit_value`, and takes the next
  // argument as its value only when that is one of the flag's choices (so `--json data.npy`
  // keeps data.npy an argument, and `--shared-memory cuda` still says cuda); `--name=value`
  // gives one. Help() shows `--name[=PLACEHOLDER]`.
  void AddOptionalString(absl::string_view name, std::string* value, std::string implicit_value,
                         absl::string_view help, absl::string_view placeholder = "STRING");
  void AddOptionalChoice(absl::string_view name, std::string* value,
                         std::vector<std::string> choices, std::string implicit_value,
                         absl::string_view help);
  // For a tool that takes no operands: the optional-value flag `name` also takes the argument
  // after a bare `--name` as its value, unless that is another flag (`--json out.json`,
  // `--json -`).
  void LetValueFollow(absl::string_view name);

  // Lets every flag --foo-bar also come from the environment variable <prefix>FOO_BAR (upper
  // case, each character other than a letter or digit as '_'). The command line wins: a flag it
  // gives is not read from the environment at all. An empty variable counts as unset; a
  // malformed value is Parse's error naming the variable. Help() shows each flag's variable.
  void SetEnvironmentPrefix(std::string prefix) { environment_prefix_ = std::move(prefix); }

  // Parses argv[first, argc) (by default everything after the program name), then the
  // environment (SetEnvironmentPrefix) for the flags it did not give. Errors are
  // InvalidArgumentError naming the offending flag or variable. Resets positional() and
  // help_requested().
  absl::Status Parse(int argc, const char* const* argv, int first = 1);
  absl::Status Parse(const std::vector<std::string>& args);

  // The usage line, the description and an aligned table of flags with their defaults.
  std::string Help() const;

  const std::string& name() const { return name_; }
  bool help_requested() const { return help_requested_; }
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  struct Flag {
    std::string name;
    std::string placeholder;  // Empty for bools, which take no separate value.
    std::string help;
    std::string default_text;  // Empty: no "(default: ...)" in Help().
    // Parses `value` into the bound variable; the error message omits the flag name.
    std::function<absl::Status(absl::string_view value)> set;
    // Set: the value may be left out, and a bare --name means this.
    std::optional<std::string> implicit_value;
    std::vector<std::string> choices;  // AddChoice's; empty for any other flag
    bool value_may_follow = false;     // LetValueFollow
  };

  void Add(Flag flag);
  const Flag* Find(absl::string_view name) const;
  // "<prefix>FOO_BAR" for --foo-bar; "" without a prefix.
  std::string EnvironmentVariable(const Flag& flag) const;
  // Sets every flag not in `given` from its environment variable, if that is set.
  absl::Status ApplyEnvironment(const std::vector<const Flag*>& given) const;
  absl::Status UnknownFlagError(absl::string_view arg, absl::string_view name) const;

  std::string name_;
  std::string synopsis_;
  std::string description_;
  std::string environment_prefix_;   // Empty: no environment variables.
  std::vector<Flag> flags_;          // In registration order, which Help() keeps.
  absl::Status registration_error_;  // The first registration mistake, reported by Parse.
  bool help_requested_ = false;
  std::vector<std::string> positional_;
};

}  // namespace gpureduce
