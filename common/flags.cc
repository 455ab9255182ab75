#include "common/flags.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/byte_size.h"
#include "common/flag_values.h"
#include "common/status_macros.h"

namespace gpureduce {
namespace {

constexpr size_t kHelpWidth = 100;     // Total columns of Help() output.
constexpr size_t kMaxFlagColumn = 30;  // Longer flag names put their help on the next line.

// Binds a FlagSet setter to ParseFlagValue for `value`'s type.
template <typename T>
std::function<absl::Status(absl::string_view)> Setter(T* value) {
  return [value](absl::string_view text) { return ParseFlagValue(text, value); };
}

// Edit distance counting an adjacent swap as one edit ("hlep" is 1 from "help"), for
// "did you mean" suggestions.
size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitute = d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, substitute});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// Appends `text` word-wrapped to kHelpWidth; continuation lines start with `indent` spaces.
// `column` is where the cursor already is on the current line.
void AppendWrapped(std::string* out, absl::string_view text, size_t indent, size_t column) {
  bool first_word = true;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (!first_word && column + 1 + word.size() > kHelpWidth) {
      absl::StrAppend(out, "\n", std::string(indent, ' '));
      column = indent;
      first_word = true;
    }
    if (!first_word) {
      out->push_back(' ');
      ++column;
    }
    absl::StrAppend(out, word);
    column += word.size();
    first_word = false;
  }
}

}  // namespace

FlagSet::FlagSet(std::string name, std::string synopsis, std::string description)
    : name_(std::move(name)),
      synopsis_(std::move(synopsis)),
      description_(std::move(description)) {}

void FlagSet::AddString(absl::string_view name, std::string* value, absl::string_view help,
                        absl::string_view placeholder) {
  Add({std::string(name), std::string(placeholder), std::string(help),
       value->empty() ? "" : absl::StrCat("\"", *value, "\""), [value](absl::string_view text) {
         *value = std::string(text);
         return absl::OkStatus();
       }});
}

void FlagSet::AddBool(absl::string_view name, bool* value, absl::string_view help) {
  Add({std::string(name), "", std::string(help), *value ? "true" : "false", Setter(value)});
}

void FlagSet::AddInt64(absl::string_view name, int64_t* value, absl::string_view help,
                       absl::string_view placeholder) {
  Add({std::string(name), std::string(placeholder), std::string(help), absl::StrCat(*value),
       Setter(value)});
}

void FlagSet::AddUint64(absl::string_view name, uint64_t* value, absl::string_view help,
                        absl::string_view placeholder) {
  Add({std::string(name), std::string(placeholder), std::string(help), absl::StrCat(*value),
       Setter(value)});
}

void FlagSet::AddUint32(absl::string_view name, uint32_t* value, absl::string_view help,
                        absl::string_view placeholder) {
  Add({std::string(name), std::string(placeholder), std::string(help), absl::StrCat(*value),
       Setter(value)});
}

void FlagSet::AddDouble(absl::string_view name, double* value, absl::string_view help,
                        absl::string_view placeholder) {
  Add({std::string(name), std::string(placeholder), std::string(help), absl::StrCat(*value),
       Setter(value)});
}

void FlagSet::AddByteSize(absl::string_view name, uint64_t* value, absl::string_view help,
                          absl::string_view placeholder) {
  Add({std::string(name), std::string(placeholder), std::string(help), FormatByteSize(*value),
       [value](absl::string_view text) -> absl::Status {
         ASSIGN_OR_RETURN(*value, ParseByteSize(text));
         return absl::OkStatus();
       }});
}

void FlagSet::AddDuration(absl::string_view name, absl::Duration* value, absl::string_view help,
                          absl::string_view placeholder) {
  Add({std::string(name), std::string(placeholder), std::string(help), absl::FormatDuration(*value),
       Setter(value)});
}

void FlagSet::AddChoice(absl::string_view name, std::string* value,
                        std::vector<std::string> choices, absl::string_view help) {
  const std::string braced = absl::StrCat("{", absl::StrJoin(choices, "|"), "}");
  if (!value->empty() && std::find(choices.begin(), choices.end(), *value) == choices.end() &&
      registration_error_.ok()) {
    registration_error_ = absl::InvalidArgumentError(
        absl::StrFormat("flag --%s: default \"%s\" is not one of %s", name, *value, braced));
  }
  Add({std::string(name), braced, std::string(help), *value,
       [value, choices = std::move(choices), braced](absl::string_view text) {
         if (std::find(choices.begin(), choices.end(), text) == choices.end()) {
           return absl::InvalidArgumentError(absl::StrCat("expected one of ", braced));
         }
         *value = std::string(text);
         return absl::OkStatus();
       }});
}

void FlagSet::AddOptionalString(absl::string_view name, std::string* value,
                                std::string implicit_value, absl::string_view help,
                                absl::string_view placeholder) {
  AddString(name, value, help, placeholder);
  flags_.back().implicit_value = std::move(implicit_value);
}

void FlagSet::AddOptionalChoice(absl::string_view name, std::string* value,
                                std::vector<std::string> choices, std::string implicit_value,
                                absl::string_view help) {
  if (std::find(choices.begin(), choices.end(), implicit_value) == choices.end() &&
      registration_error_.ok()) {
    registration_error_ = absl::InvalidArgumentError(
        absl::StrFormat("flag --%s: bare value \"%s\" is not a choice", name, implicit_value));
  }
  AddChoice(name, value, choices, help);
  flags_.back().implicit_value = std::move(implicit_value);
  flags_.back().choices = std::move(choices);
}

void FlagSet::LetValueFollow(absl::string_view name) {
  for (Flag& flag : flags_) {
    if (flag.name == name && flag.implicit_value.has_value()) {
      flag.value_may_follow = true;
      return;
    }
  }
  if (registration_error_.ok()) {
    registration_error_ = absl::InvalidArgumentError(
        absl::StrFormat("flag --%s: not a registered flag whose value may be left out", name));
  }
}

void FlagSet::Add(Flag flag) {
  absl::string_view problem;
  if (flag.name.empty() || flag.name.front() == '-' || absl::StrContains(flag.name, '=') ||
      absl::StrContains(flag.name, ' ')) {
    problem = "is not a valid flag name";
  } else if (flag.name == "help" || flag.name == "h") {
    problem = "is reserved for help";
  } else if (Find(flag.name) != nullptr) {
    problem = "is registered twice";
  }
  if (!problem.empty() && registration_error_.ok()) {
    registration_error_ =
        absl::InvalidArgumentError(absl::StrFormat("flag \"--%s\" %s", flag.name, problem));
  }
  flags_.push_back(std::move(flag));
}

const FlagSet::Flag* FlagSet::Find(absl::string_view name) const {
  for (const Flag& flag : flags_) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

absl::Status FlagSet::UnknownFlagError(absl::string_view arg, absl::string_view name) const {
  std::vector<std::string> candidates = {"help"};
  for (const Flag& flag : flags_) {
    candidates.push_back(flag.name);
    if (flag.placeholder.empty()) candidates.push_back(absl::StrCat("no-", flag.name));
  }
  // Allow one typo in short names, two in longer ones; never suggest an unrelated flag.
  size_t best_distance = name.size() < 5 ? 2 : 3;
  const std::string* best = nullptr;
  for (const std::string& candidate : candidates) {
    const size_t distance = EditDistance(name, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = &candidate;
    }
  }
  std::string message = absl::StrCat("unknown flag ", arg);
  if (best != nullptr) absl::StrAppend(&message, "; did you mean --", *best, "?");
  return absl::InvalidArgumentError(message);
}

absl::Status FlagSet::Parse(int argc, const char* const* argv, int first) {
  std::vector<std::string> args;
  for (int i = std::max(first, 0); i < argc; ++i) args.emplace_back(argv[i]);
  return Parse(args);
}

std::string FlagSet::EnvironmentVariable(const Flag& flag) const {
  if (environment_prefix_.empty()) return "";
  std::string name = environment_prefix_;
  for (char c : flag.name) name.push_back(absl::ascii_isalnum(c) ? absl::ascii_toupper(c) : '_');
  return name;
}

absl::Status FlagSet::ApplyEnvironment(const std::vector<const Flag*>& given) const {
  if (environment_prefix_.empty()) return absl::OkStatus();
  for (const Flag& flag : flags_) {
    if (std::find(given.begin(), given.end(), &flag) != given.end()) continue;
    const std::string variable = EnvironmentVariable(flag);
    const char* value = std::getenv(variable.c_str());
    if (value == nullptr || *value == '\0') continue;
    if (absl::Status status = flag.set(value); !status.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: invalid value \"%s\" for --%s: %s", variable, value, flag.name, status.message()));
    }
  }
  return absl::OkStatus();
}

absl::Status FlagSet::Parse(const std::vector<std::string>& args) {
  if (!registration_error_.ok()) return registration_error_;
  help_requested_ = false;
  positional_.clear();
  std::vector<const Flag*> given;  // by the command line: the environment does not touch them
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      positional_.insert(positional_.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (arg == "-h" || arg == "--help") {
      help_requested_ = true;
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-') {  // Includes "-", conventionally stdin.
      positional_.push_back(arg);
      continue;
    }
    if (arg[1] != '-') {
      absl::string_view name = absl::string_view(arg).substr(1);
      name = name.substr(0, name.find('='));
      return UnknownFlagError(arg, name);
    }

    absl::string_view body = absl::string_view(arg).substr(2);
    const size_t equals = body.find('=');
    const bool has_value = equals != absl::string_view::npos;
    const absl::string_view name = body.substr(0, equals);
    absl::string_view value = has_value ? body.substr(equals + 1) : absl::string_view();
    const std::string flag_text = absl::StrCat("--", name);

    const Flag* flag = Find(name);
    if (flag == nullptr && absl::StartsWith(name, "no-")) {
      const Flag* negated = Find(name.substr(3));
      if (negated != nullptr && negated->placeholder.empty()) {
        if (has_value) {
          return absl::InvalidArgumentError(absl::StrCat(flag_text, " takes no value"));
        }
        negated->set("false").IgnoreError();  // Parsing "false" cannot fail.
        given.push_back(negated);
        continue;
      }
      if (negated != nullptr) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s is not valid: --%s is not a boolean flag", flag_text, negated->name));
      }
    }
    if (name == "help") {
      return absl::InvalidArgumentError("--help takes no value");
    }
    if (flag == nullptr) return UnknownFlagError(flag_text, name);

    if (!has_value) {
      if (flag->placeholder.empty()) {
        value = "true";
      } else if (flag->implicit_value.has_value()) {
        const bool has_next = i + 1 < args.size();
        const bool next_is_value =
            has_next && (flag->value_may_follow
                             ? !absl::StartsWith(args[i + 1], "--")
                             : std::find(flag->choices.begin(), flag->choices.end(), args[i + 1]) !=
                                   flag->choices.end());
        value = next_is_value ? absl::string_view(args[++i]) : *flag->implicit_value;
      } else if (i + 1 < args.size() && !absl::StartsWith(args[i + 1], "--")) {
        value = args[++i];
      } else {
        // A following "--flag" is far more likely a forgotten value than the value itself.
        return absl::InvalidArgumentError(absl::StrFormat("missing value for %s (expected %s=%s)",
                                                          flag_text, flag_text, flag->placeholder));
      }
    }
    if (absl::Status status = flag->set(value); !status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("invalid value \"%s\" for %s: %s", value, flag_text, status.message()));
    }
    given.push_back(flag);
  }
  // --help prints and exits: a variable meant for the real run must not stop it.
  return help_requested_ ? absl::OkStatus() : ApplyEnvironment(given);
}

std::string FlagSet::Help() const {
  std::string out = absl::StrCat("Usage: ", synopsis_, "\n");
  if (!description_.empty()) {
    for (absl::string_view paragraph : absl::StrSplit(description_, '\n')) {
      out.push_back('\n');
      AppendWrapped(&out, paragraph, 0, 0);
    }
    out.push_back('\n');
  }

  std::vector<std::pair<std::string, std::string>> rows;  // {"--name=VALUE", "help (default)"}
  for (const Flag& flag : flags_) {
    std::string left = absl::StrCat("--", flag.name);
    if (flag.implicit_value.has_value()) {
      absl::StrAppend(&left, "[=", flag.placeholder, "]");
    } else if (!flag.placeholder.empty()) {
      absl::StrAppend(&left, "=", flag.placeholder);
    }
    std::string right = flag.help;
    if (!flag.default_text.empty()) absl::StrAppend(&right, " (default: ", flag.default_text, ")");
    if (!environment_prefix_.empty())
      absl::StrAppend(&right, " [env ", EnvironmentVariable(flag), "]");
    rows.emplace_back(std::move(left), std::move(right));
  }
  rows.emplace_back("-h, --help", "show this help and exit");

  size_t column = 0;
  for (const auto& [left, right] : rows) {
    if (left.size() <= kMaxFlagColumn) column = std::max(column, left.size());
  }
  const size_t indent = 2 + column + 3;  // "  " + flag column + gap.
  absl::StrAppend(&out, "\nFlags:\n");
  for (const auto& [left, right] : rows) {
    absl::StrAppend(&out, "  ", left);
    if (left.size() > column) {
      absl::StrAppend(&out, "\n", std::string(indent, ' '));
    } else {
      out.append(indent - 2 - left.size(), ' ');
    }
    AppendWrapped(&out, right, indent, indent);
    out.push_back('\n');
  }
  return out;
}

}  // namespace gpureduce
