#pragma once

// What every gpureduce subcommand shares: exit codes, the connection flags and error reports.

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/flags.h"

namespace gpureduce::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitServerRefused = 1,  // the server (or the connection) answered with a gRPC error
  kExitUsage = 2,          // bad flags or unreadable input; nothing was sent
};

struct ConnectionOptions {
  std::string target = "127.0.0.1:50051";
  absl::Duration timeout = absl::Seconds(0);  // 0: no deadline
  bool json = false;
};

void AddConnectionFlags(FlagSet& flags, ConnectionOptions* options);

// The call deadline the options ask for (infinite when --timeout is 0).
absl::Duration CallTimeout(const ConnectionOptions& options);

// Parses the subcommand's flags. Returns -1 to go on, or the exit code to return now (help
// printed: 0; a usage error printed: 2).
int ParseFlags(FlagSet& flags, int argc, char** argv, size_t max_positional);

// Prints "gpureduce <command>: the server refused: CODE: message" and returns 1.
int ReportServerError(const char* command, const absl::Status& status);

// Prints "gpureduce <command>: message" and returns 2.
int ReportUsageError(const char* command, const std::string& message);

}  // namespace gpureduce::cli
