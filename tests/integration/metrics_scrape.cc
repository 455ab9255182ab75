#include "tests/integration/metrics_scrape.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace gpureduce::testing {

MetricsServer StartWithMetrics(std::vector<std::string> flags) {
  char dir[] = "/tmp/gpureduce-metrics-XXXXXX";
  MetricsServer out;
  if (mkdtemp(dir) == nullptr) {
    out.status = absl::InternalError("mkdtemp failed");
    return out;
  }
  const std::string port_file = std::string(dir) + "/metrics-port";
  flags.push_back("--metrics-listen=127.0.0.1:0");
  flags.push_back("--metrics-port-file=" + port_file);
  absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start(flags);
  out.status = server.status();
  if (!server.ok()) return out;
  out.server = std::move(*server);
  std::ifstream(port_file) >> out.metrics_port;
  std::remove(port_file.c_str());
  rmdir(dir);
  return out;
}

double Value(const std::string& scrape, const std::string& name, const Labels& labels) {
  std::vector<std::string> parts;
  for (const auto& [key, value] : labels) parts.push_back(absl::StrCat(key, "=\"", value, "\""));
  const std::string series =
      labels.empty() ? name : absl::StrCat(name, "{", absl::StrJoin(parts, ","), "}");
  for (absl::string_view line : absl::StrSplit(scrape, '\n')) {
    if (line.size() > series.size() && line.substr(0, series.size()) == series &&
        line[series.size()] == ' ') {
      return std::stod(std::string(line.substr(series.size() + 1)));
    }
  }
  return -1;
}

}  // namespace gpureduce::testing
