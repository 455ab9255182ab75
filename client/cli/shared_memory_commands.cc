#include "client/cli/shared_memory_commands.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/cli/command.h"
#include "client/cli/json.h"
#include "client/cli/simple_command.h"
#include "client/reducer_client.h"
#include "common/byte_size.h"
#include "common/status_macros.h"

namespace gpureduce::cli {
namespace {

constexpr char kUsage[] =
    "Usage: gpureduce shared-memory <list|unregister> [flags]\n"
    "\n"
    "The shared-memory regions a server on this host holds (it must run with\n"
    "--allow-shared-memory; 'gpureduce reduce --shared-memory' registers and unregisters its\n"
    "own):\n"
    "  list                        every region: kind, object or device, size, requests reading "
    "it\n"
    "  unregister NAME | --all     unregister one region, or every region\n"
    "\n"
    "'gpureduce shared-memory <command> --help' lists the flags.\n";

std::string KindName(v1::SharedMemoryRegion::Kind kind) {
  if (kind == v1::SharedMemoryRegion::KIND_UNSPECIFIED) return "unknown";
  return absl::AsciiStrToLower(v1::SharedMemoryRegion::Kind_Name(kind));
}

std::string Where(const v1::SharedMemoryRegion& region) {
  if (region.kind() == v1::SharedMemoryRegion::CUDA) {
    return absl::StrFormat("cuda:%d", region.device_id());
  }
  return region.key();
}

std::string ListText(const v1::ListSharedMemoryResponse& response) {
  if (response.regions().empty()) {
    return absl::StrFormat("no regions (limits: %d regions, %s in all)\n", response.max_regions(),
                           FormatByteSize(response.max_total_bytes()));
  }
  std::string out = absl::StrFormat("%-34s %-6s %-35s %12s %14s %9s %12s\n", "NAME", "KIND",
                                    "OBJECT/DEVICE", "OFFSET", "BYTES", "IN FLIGHT", "REGISTER");
  for (const v1::SharedMemoryRegion& region : response.regions()) {
    absl::StrAppendFormat(&out, "%-34s %-6s %-35s %12d %14d %9d %9.3f ms\n", region.name(),
                          KindName(region.kind()), Where(region), region.offset(),
                          region.byte_size(), region.requests_in_flight(),
                          region.register_us() / 1e3);
  }
  absl::StrAppendFormat(&out, "%d region%s, %d bytes (limits: %d regions, %s in all)\n",
                        response.regions_size(), response.regions_size() == 1 ? "" : "s",
                        response.total_bytes(), response.max_regions(),
                        FormatByteSize(response.max_total_bytes()));
  return out;
}

std::string ListJson(const v1::ListSharedMemoryResponse& response) {
  Json regions = Json::array();
  for (const v1::SharedMemoryRegion& region : response.regions()) {
    regions.push_back({{"name", region.name()},
                       {"kind", KindName(region.kind())},
                       {"key", region.key()},
                       {"device_id", region.device_id()},
                       {"offset", region.offset()},
                       {"byte_size", region.byte_size()},
                       {"requests_in_flight", region.requests_in_flight()},
                       {"register_us", JsonNumber(region.register_us())}});
  }
  return JsonLine({{"regions", std::move(regions)},
                   {"max_regions", response.max_regions()},
                   {"max_total_bytes", response.max_total_bytes()},
                   {"total_bytes", response.total_bytes()}});
}

int RunList(int argc, char** argv) {
  FlagSet flags("gpureduce shared-memory list", "gpureduce shared-memory list [flags]",
                "Lists the shared-memory regions the server holds, with its limits.");
  return RunSimpleCommand({.name = "shared-memory list", .balancing = client::Balancing::kInOrder},
                          flags, argc, argv,
                          [](client::ReducerClient& reducer, const client::CallOptions& options,
                             const std::string&) -> absl::StatusOr<Answer> {
                            ASSIGN_OR_RETURN(const v1::ListSharedMemoryResponse response,
                                             reducer.ListSharedMemory(options));
                            return Answer{ListText(response), ListJson(response)};
                          });
}

int RunUnregister(int argc, char** argv) {
  bool all = false;
  FlagSet flags("gpureduce shared-memory unregister",
                "gpureduce shared-memory unregister [flags] NAME|--all",
                "Unregisters one shared-memory region, or every region with --all. A request "
                "reading a region keeps its memory until it ends.");
  flags.AddBool("all", &all, "unregister every region");
  const SimpleCommand command = {
      .name = "shared-memory unregister",
      .max_operands = 1,
      .balancing = client::Balancing::kInOrder,
      .check_operands = [&]() -> std::string {
        return all == !flags.positional().empty() ? "give either a region's NAME or --all" : "";
      }};
  return RunSimpleCommand(
      command, flags, argc, argv,
      [&](client::ReducerClient& reducer, const client::CallOptions& options,
          const std::string&) -> absl::StatusOr<Answer> {
        ASSIGN_OR_RETURN(const std::vector<std::string> names,
                         all ? reducer.UnregisterAllSharedMemory(options)
                             : reducer.UnregisterSharedMemory(flags.positional().front(), options));
        return Answer{names.empty()
                          ? "no regions were registered\n"
                          : absl::StrCat("unregistered ", absl::StrJoin(names, ", "), "\n"),
                      JsonLine({{"unregistered", names}})};
      });
}

}  // namespace

int RunSharedMemory(int argc, char** argv) {
  // argv: gpureduce shared-memory <command> [flags]; the command's flags start at argv[3].
  if (argc < 3) {
    std::fputs(kUsage, stderr);
    return kExitUsage;
  }
  const char* command = argv[2];
  if (std::strcmp(command, "list") == 0) return RunList(argc - 1, argv + 1);
  if (std::strcmp(command, "unregister") == 0) return RunUnregister(argc - 1, argv + 1);
  if (std::strcmp(command, "--help") == 0 || std::strcmp(command, "-h") == 0 ||
      std::strcmp(command, "help") == 0) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  std::fprintf(stderr, "gpureduce shared-memory: unknown command '%s'\n\n%s", command, kUsage);
  return kExitUsage;
}

}  // namespace gpureduce::cli
