#pragma once

// The shape the CLI's simple subcommands share (kernels, info, health, shared-memory list and
// unregister): parse the flags, connect, make the call, print its answer as text or JSON.

#include <cstddef>
#include <functional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/cli/command.h"
#include "client/reducer_client.h"
#include "common/flags.h"

namespace gpureduce::cli {

// What a call has to say, both ways; --json picks.
struct Answer {
  std::string text;
  std::string json;
  int exit_code = kExitOk;
};

struct SimpleCommand {
  const char* name = "";  // as messages name it: "kernels", "shared-memory list"
  size_t max_operands = 0;
  // Shared memory lives in one server: its calls go in order (see Connect).
  client::Balancing balancing = client::Balancing::kRoundRobin;
  // The deadline when --timeout is 0.
  absl::Duration default_timeout = absl::InfiniteDuration();
  // Checked after parsing, before connecting: a usage error's message, or "" to go on.
  std::function<std::string()> check_operands;
};

// `target` is --target, which some answers show.
using SimpleCall = absl::FunctionRef<absl::StatusOr<Answer>(
    client::ReducerClient& reducer, const client::CallOptions& options, const std::string& target)>;

// Adds the connection flags to `flags` (which holds the command's own), parses argv from its
// third argument, connects, calls and prints. Returns the exit code: the answer's, 1 when the
// server refused, 2 for a usage error.
int RunSimpleCommand(const SimpleCommand& command, FlagSet& flags, int argc, char** argv,
                     SimpleCall call);

}  // namespace gpureduce::cli
