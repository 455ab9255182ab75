#pragma once

// --json, with one meaning in every tool (gpureduce, gpureduce-load, gpureduce-bench): a bare
// `--json`, or `--json=-`, prints the JSON on stdout in place of the text; `--json=FILE` writes
// it to FILE and the text still goes to stdout.

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/flags.h"

namespace gpureduce {

class JsonFlag {
 public:
  static constexpr char kStdout[] = "-";

  // Whether the tool takes operands: one that does (the CLI's input file) keeps the argument
  // after a bare --json an operand; one that does not also reads `--json FILE` and `--json -`,
  // the older spellings, as --json=FILE and --json=-.
  enum class Operands { kTaken, kNone };

  // Registers --json[=FILE]; `what` names the JSON in the help ("the report").
  void Register(FlagSet& flags, absl::string_view what, Operands operands = Operands::kTaken);

  bool requested() const { return !destination_.empty(); }
  // The JSON replaces the text on stdout.
  bool on_stdout() const { return destination_ == kStdout; }
  // "-" for stdout, a file, or "" when --json was not given.
  const std::string& destination() const { return destination_; }

  // Writes `json` where --json said: a run's first Write replaces the file, later ones add to it
  // (the CLI writes one line per op). An unwritable file is an error that names it.
  absl::Status Write(absl::string_view json);

 private:
  std::string destination_;
  bool written_ = false;
};

}  // namespace gpureduce
