#pragma once

// gpureduce-load's report of one run: a text table for people, one JSON document or a CSV row
// for scripts (scripts/plot_load.py reads the JSON).

#include <string>

#include "client/load/load_runner.h"
#include "client/load/workload.h"
#include "nlohmann/json.hpp"

namespace gpureduce::client {

struct LoadRun {
  std::string label;  // free text the user attaches (--label)
  LoadOptions options;
  WorkloadOptions workload;
  LoadResult result;
};

std::string ReportText(const LoadRun& run);
nlohmann::json ReportJson(const LoadRun& run);
std::string ReportCsvHeader();
std::string ReportCsvRow(const LoadRun& run);

}  // namespace gpureduce::client
