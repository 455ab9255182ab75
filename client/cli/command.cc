#include "client/cli/command.h"

#include <cstdio>

namespace gpureduce::cli {

void AddConnectionFlags(FlagSet& flags, ConnectionOptions* options) {
  flags.AddString("target", &options->target,
                  "the server: HOST:PORT, or several behind one target, calls going round robin "
                  "over those that are up: ipv4:HOST1:PORT,HOST2:PORT or dns:///NAME:PORT (a "
                  "headless Service); --streams then deals its parts over them and sends a part "
                  "again if its server goes away",
                  "TARGET");
  flags.AddDuration("timeout", &options->timeout, "deadline for the call; 0 means none");
  options->json.Register(flags, "the answer");
  client::AddSecurityFlags(flags, &options->security);
}

absl::StatusOr<std::unique_ptr<client::ReducerClient>> Connect(const ConnectionOptions& options,
                                                               bool own_connection,
                                                               client::Balancing balancing) {
  return client::ReducerClient::Connect(options.target, options.security, own_connection,
                                        balancing);
}

absl::Duration CallTimeout(const ConnectionOptions& options) {
  return options.timeout == absl::ZeroDuration() ? absl::InfiniteDuration() : options.timeout;
}

int ParseFlags(FlagSet& flags, int argc, char** argv, size_t max_positional) {
  if (absl::Status parsed = flags.Parse(argc, argv, 2); !parsed.ok()) {
    std::fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", flags.name().c_str(),
                 std::string(parsed.message()).c_str(), flags.name().c_str());
    return kExitUsage;
  }
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return kExitOk;
  }
  if (flags.positional().size() > max_positional) {
    std::fprintf(stderr, "%s: unexpected argument '%s'\nRun '%s --help' for usage.\n",
                 flags.name().c_str(), flags.positional()[max_positional].c_str(),
                 flags.name().c_str());
    return kExitUsage;
  }
  return -1;
}

int PrintAnswer(const char* command, ConnectionOptions& options, absl::string_view text,
                absl::string_view json) {
  if (!options.json.on_stdout()) std::fwrite(text.data(), 1, text.size(), stdout);
  if (!options.json.requested()) return kExitOk;
  if (absl::Status written = options.json.Write(json); !written.ok()) {
    return ReportUsageError(command, std::string(written.message()));
  }
  return kExitOk;
}

int ReportServerError(const char* command, const absl::Status& status) {
  std::fprintf(stderr, "gpureduce %s: the server refused: %s: %s\n", command,
               absl::StatusCodeToString(status.code()).c_str(),
               std::string(status.message()).c_str());
  return kExitServerRefused;
}

int ReportUsageError(const char* command, const std::string& message) {
  std::fprintf(stderr, "gpureduce %s: %s\n", command, message.c_str());
  return kExitUsage;
}

}  // namespace gpureduce::cli
