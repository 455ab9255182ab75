#pragma once

// gpureduce-load's command line: what to send, how, and where the report goes.

#include <unistd.h>

#include <string>

#include "absl/status/status.h"
#include "client/load/load_runner.h"
#include "client/load/workload.h"
#include "common/flags.h"
#include "common/json_flag.h"

namespace gpureduce::client {

// Where the report goes, and whether the requests go by reference.
struct OutputFlags {
  JsonFlag json;
  bool csv = false;
  bool csv_header = true;
  std::string label;
  bool progress = isatty(STDERR_FILENO) != 0;
  std::string shared_memory;          // "", or a kind of common/shared_memory_flag.h
  std::string shared_memory_devices;  // cuda: GPUs to put regions on, "0,1"; "": GPU 0
};

// Binds every flag of `gpureduce-load` (not of its sink) to the options; `op` gets --op's text
// (an op or a comma list, for ApplyOpAndDType), `dtype` --dtype's (when given a place).
void RegisterLoadFlags(FlagSet& flags, LoadOptions* load, WorkloadOptions* work, std::string* op,
                       OutputFlags* out, std::string* dtype = nullptr);

// Parses --op (one op or a comma list: work->op, and work->ops for a list) and --dtype into
// `work`; InvalidArgument naming the bad entry and the choices.
absl::Status ApplyOpAndDType(const std::string& op, const std::string& dtype,
                             WorkloadOptions* work);

}  // namespace gpureduce::client
