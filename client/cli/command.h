#pragma once

// What every gpureduce subcommand shares: exit codes, the connection flags and error reports.

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/reducer_client.h"
#include "common/flags.h"
#include "common/json_flag.h"

namespace gpureduce::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitServerRefused = 1,  // the server (or the connection) answered with a gRPC error
  kExitUsage = 2,          // bad flags or unreadable input; nothing was sent
};

struct ConnectionOptions {
  std::string target = "127.0.0.1:50051";
  absl::Duration timeout = absl::Seconds(0);  // 0: no deadline
  JsonFlag json;                              // --json[=FILE]
  client::ChannelSecurity security;           // --tls-ca, --tls-cert, --tls-key, --token-file
};

void AddConnectionFlags(FlagSet& flags, ConnectionOptions* options);

// A client for the options' target and security; an unreadable TLS or token file is an error.
// Shared memory lives in one server: its calls use Balancing::kInOrder, so that with a target
// that names several servers every call of a region reaches the one that registered it.
absl::StatusOr<std::unique_ptr<client::ReducerClient>> Connect(
    const ConnectionOptions& options, bool own_connection = false,
    client::Balancing balancing = client::Balancing::kRoundRobin);

// The call deadline the options ask for (infinite when --timeout is 0).
absl::Duration CallTimeout(const ConnectionOptions& options);

// Parses the subcommand's flags. Returns -1 to go on, or the exit code to return now (help
// printed: 0; a usage error printed: 2).
int ParseFlags(FlagSet& flags, int argc, char** argv, size_t max_positional);

// Prints an answer as --json asks: `text` on stdout unless the JSON goes there instead, `json`
// wherever --json sends it. Returns 0, or 2 when the JSON's file cannot be written.
int PrintAnswer(const char* command, ConnectionOptions& options, absl::string_view text,
                absl::string_view json);

// Prints "gpureduce <command>: the server refused: CODE: message" and returns 1.
int ReportServerError(const char* command, const absl::Status& status);

// Prints "gpureduce <command>: message" and returns 2.
int ReportUsageError(const char* command, const std::string& message);

}  // namespace gpureduce::cli
