#include "client/cli/simple_command.h"

#include <memory>

namespace gpureduce::cli {

int RunSimpleCommand(const SimpleCommand& command, FlagSet& flags, int argc, char** argv,
                     SimpleCall call) {
  ConnectionOptions connection;
  AddConnectionFlags(flags, &connection);
  if (int exit = ParseFlags(flags, argc, argv, command.max_operands); exit >= 0) return exit;
  if (command.check_operands) {
    if (const std::string problem = command.check_operands(); !problem.empty()) {
      return ReportUsageError(command.name, problem);
    }
  }
  absl::StatusOr<std::unique_ptr<client::ReducerClient>> reducer =
      Connect(connection, /*own_connection=*/false, command.balancing);
  if (!reducer.ok()) return ReportUsageError(command.name, std::string(reducer.status().message()));
  client::CallOptions options;
  options.timeout =
      connection.timeout == absl::ZeroDuration() ? command.default_timeout : connection.timeout;
  absl::StatusOr<Answer> answer = call(**reducer, options, connection.target);
  if (!answer.ok()) return ReportServerError(command.name, answer.status());
  if (int exit = PrintAnswer(command.name, connection, answer->text, answer->json); exit != 0) {
    return exit;
  }
  return answer->exit_code;
}

}  // namespace gpureduce::cli
