// gpureduce: the command-line client of gpureduce-server.

#include <cstdio>
#include <cstring>

#include "client/cli/command.h"
#include "client/cli/info_commands.h"
#include "client/cli/reduce_command.h"
#include "client/cli/shared_memory_commands.h"
#include "common/malloc_tuning.h"
#include "common/mutex_tuning.h"
#include "gpureduce/version.h"

namespace {

constexpr char kUsage[] =
    "gpureduce: reduce float32 arrays on a gpureduce server.\n"
    "\n"
    "Usage: gpureduce <command> [flags]\n"
    "\n"
    "Commands:\n"
    "  reduce    reduce a .npy, raw or text file, stdin, or --random N floats (with\n"
    "            --shared-memory by reference, for a server on this host)\n"
    "  kernels   list the kernels the server can run\n"
    "  info      show the server's backend, devices and limits\n"
    "  health    ask whether the server is SERVING\n"
    "  shared-memory list|unregister\n"
    "            the server's shared-memory regions (reduce --shared-memory makes its own)\n"
    "\n"
    "Every command takes --target HOST:PORT (default 127.0.0.1:50051), --timeout and --json;\n"
    "'gpureduce <command> --help' lists the rest.\n"
    "Exit codes: 0 ok, 1 the server refused (its gRPC code and message are printed), 2 usage.\n"
    "\n"
    "Example: gpureduce reduce --random 100000000 --op sum --verify\n"
    "         gpureduce reduce --shared-memory --op sum,min,max data.npy   # server on this host\n"
    "         gpureduce reduce --axis 1 --op sum,max --output out.npy x.npy  # NumPy's axis=1\n";

}  // namespace

int main(int argc, char** argv) {
  gpureduce::TuneMallocForLargeMessages();
  gpureduce::SkipMutexDeadlockDetection();
  using gpureduce::cli::kExitUsage;
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return kExitUsage;
  }
  const char* command = argv[1];
  if (std::strcmp(command, "reduce") == 0) return gpureduce::cli::RunReduce(argc, argv);
  if (std::strcmp(command, "kernels") == 0) return gpureduce::cli::RunKernels(argc, argv);
  if (std::strcmp(command, "info") == 0) return gpureduce::cli::RunInfo(argc, argv);
  if (std::strcmp(command, "health") == 0) return gpureduce::cli::RunHealth(argc, argv);
  if (std::strcmp(command, "shared-memory") == 0) {
    return gpureduce::cli::RunSharedMemory(argc, argv);
  }
  if (std::strcmp(command, "--help") == 0 || std::strcmp(command, "-h") == 0 ||
      std::strcmp(command, "help") == 0) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (std::strcmp(command, "--version") == 0) {
    std::printf("gpureduce %s+%s\n", gpureduce::kVersion, gpureduce::kGitCommit);
    return 0;
  }
  std::fprintf(stderr, "gpureduce: unknown command '%s'\n\n%s", command, kUsage);
  return kExitUsage;
}
