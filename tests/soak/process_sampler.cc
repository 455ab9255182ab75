#include "tests/soak/process_sampler.h"

#include <dirent.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace gpureduce::testing::soak {
namespace {

// The first number of a line "Name:  123 kB" of /proc/<pid>/status.
std::optional<uint64_t> StatusNumber(const std::string& status, const std::string& name) {
  for (absl::string_view line : absl::StrSplit(status, '\n')) {
    if (absl::ConsumePrefix(&line, name + ":")) {
      return std::strtoull(std::string(line).c_str(), nullptr, 10);
    }
  }
  return std::nullopt;
}

// The threads of `pid`, and of them those named like gRPC's default executor's
// ("default-executor", cut to 15), from one scan so that the two agree.
void CountThreads(pid_t pid, ProcessSample* sample) {
  const std::string task_dir = absl::StrCat("/proc/", pid, "/task");
  if (DIR* dir = opendir(task_dir.c_str())) {
    while (const dirent* entry = readdir(dir)) {
      if (entry->d_name[0] == '.') continue;
      ++sample->threads;
      std::string name;
      std::getline(std::ifstream(absl::StrCat(task_dir, "/", entry->d_name, "/comm")), name);
      if (absl::StartsWith(name, "default-executo")) ++sample->grpc_executor_threads;
    }
    closedir(dir);
  }
}

// nvidia-smi's "pid, used_memory" rows for compute processes; the row of `pid`, in MiB.
std::optional<uint64_t> GpuMemoryMib(pid_t pid) {
  FILE* smi = popen(
      "nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null",
      "r");
  if (smi == nullptr) return std::nullopt;
  std::optional<uint64_t> mib;
  char line[256];
  while (std::fgets(line, sizeof(line), smi) != nullptr) {
    std::vector<std::string> fields = absl::StrSplit(line, ',');
    uint64_t row_pid = 0, used = 0;
    if (fields.size() == 2 && absl::SimpleAtoi(absl::StripAsciiWhitespace(fields[0]), &row_pid) &&
        absl::SimpleAtoi(absl::StripAsciiWhitespace(fields[1]), &used) &&
        row_pid == uint64_t(pid)) {
      mib = mib.value_or(0) + used;
    }
  }
  pclose(smi);
  return mib;
}

}  // namespace

absl::StatusOr<ProcessSample> SampleProcess(pid_t pid, bool with_gpu) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  if (!in) return absl::NotFoundError(absl::StrCat("no process ", pid));
  const std::string status((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // A server that died stays a zombie of the script that started it, with no memory left.
  if (status.find("State:\tZ") != std::string::npos || !StatusNumber(status, "VmRSS")) {
    return absl::NotFoundError(absl::StrCat("process ", pid, " has exited"));
  }
  ProcessSample sample;
  sample.rss_kib = StatusNumber(status, "VmRSS").value_or(0);
  CountThreads(pid, &sample);
  const std::string fd_dir = absl::StrCat("/proc/", pid, "/fd");
  if (DIR* dir = opendir(fd_dir.c_str())) {
    while (const dirent* entry = readdir(dir)) {
      if (entry->d_name[0] != '.') ++sample.open_files;
    }
    closedir(dir);
  }
  if (with_gpu) sample.gpu_mib = GpuMemoryMib(pid);
  return sample;
}

uint64_t GrpcExecutorCap(pid_t pid) {
  // grpc_core::Executor: two threads per core, the cores as gpr_cpu_num_cores counts them (the
  // process's CPU affinity).
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  const int cores = sched_getaffinity(pid, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 0;
  return 2 * uint64_t(std::max(1, cores > 0 ? cores : int(std::thread::hardware_concurrency())));
}

}  // namespace gpureduce::testing::soak
