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

// An array request's layout as given (--shape, --axis, --keepdims, --segments); ApplyLayout
// makes it the workload's once the request's element count is known.
struct LayoutFlags {
  std::string shape;
  std::string axis;
  bool keepdims = false;
  std::string segments;  // N (equal segments), a list of lengths, or @FILE of lengths
};

// Where the report goes, whether the requests go by reference, and their array layout.
struct OutputFlags {
  JsonFlag json;
  bool csv = false;
  bool csv_header = true;
  std::string label;
  bool progress = isatty(STDERR_FILENO) != 0;
  std::string shared_memory;          // "", or a kind of common/shared_memory_flag.h
  std::string shared_memory_devices;  // cuda: GPUs to put regions on, "0,1"; "": GPU 0
  LayoutFlags layout;
};

// Binds every flag of `gpureduce-load` (not of its sink) to the options; `op` gets --op's text
// (an op or a comma list, for ApplyOpAndDType), `dtype` --dtype's (when given a place).
void RegisterLoadFlags(FlagSet& flags, LoadOptions* load, WorkloadOptions* work, std::string* op,
                       OutputFlags* out, std::string* dtype = nullptr);

// Parses --op (one op or a comma list: work->op, and work->ops for a list) and --dtype into
// `work`; InvalidArgument naming the bad entry and the choices.
absl::Status ApplyOpAndDType(const std::string& op, const std::string& dtype,
                             WorkloadOptions* work);

// Parses the layout flags into work->layout, after ApplyOpAndDType: --segments N cuts each
// request's elements (--floats, or --bytes over the dtype's size) into N segments as equal as
// they come (the first elements % N one longer). InvalidArgument for bad syntax, --axis or
// --keepdims without --shape, --shape with --segments, or a layout that does not fit a request.
absl::Status ApplyLayout(const LayoutFlags& flags, WorkloadOptions* work);

}  // namespace gpureduce::client
