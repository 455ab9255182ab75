#pragma once

// The real server with its Prometheus endpoint on a free port, and reading one series of a
// scrape, for the system tests of the metrics and of what hostile clients do.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tests/integration/server_process.h"

namespace gpureduce::testing {

using Labels = std::map<std::string, std::string>;

// A server with its metrics on a free port, and the port.
struct MetricsServer {
  std::unique_ptr<ServerProcess> server;
  int metrics_port = 0;
  absl::Status status;
};

// ServerProcess::Start(flags) with --metrics-listen on a free loopback port.
MetricsServer StartWithMetrics(std::vector<std::string> flags);

// The value of one series in a scrape, -1 when it is absent. prometheus-cpp writes labels in
// name order, as std::map keeps them.
double Value(const std::string& scrape, const std::string& name, const Labels& labels = {});

}  // namespace gpureduce::testing
