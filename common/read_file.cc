#include "common/read_file.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace gpureduce {

absl::StatusOr<std::string> ReadTextFile(const std::string& path, absl::string_view what) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read the ", what, " file ", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace gpureduce
