#include "common/json_flag.h"

#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace gpureduce {

void JsonFlag::Register(FlagSet& flags, absl::string_view what, Operands operands) {
  flags.AddOptionalString("json", &destination_, kStdout,
                          absl::StrCat(what,
                                       " as JSON: on stdout in place of the text (--json or "
                                       "--json=-), or into FILE as well as the text (--json=FILE)"),
                          "FILE");
  if (operands == Operands::kNone) flags.LetValueFollow("json");
}

absl::Status JsonFlag::Write(absl::string_view json) {
  if (on_stdout()) {
    std::fwrite(json.data(), 1, json.size(), stdout);
    return absl::OkStatus();
  }
  std::ofstream file(destination_, written_ ? std::ios::app : std::ios::trunc);
  written_ = true;
  if (!(file << json) || !file.flush()) {
    return absl::UnavailableError(absl::StrCat("cannot write the JSON to ", destination_));
  }
  return absl::OkStatus();
}

}  // namespace gpureduce
