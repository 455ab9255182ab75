// The server's backend flags become typed runtime options: the defaults are BackendOptions',
// --cuda-streams and its deprecated old name --streams (with the warning, also from the
// environment), device lists with precise errors, and the backend's errors worded with the flags.

#include "server/backend_flags.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpureduce::server {
namespace {

using runtime::BackendChoice;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Parses `args` (and the environment, as gpureduce-server does) into `backend`.
absl::Status Parse(BackendFlags& backend, const std::vector<std::string>& args) {
  FlagSet flags("gpureduce-server", "gpureduce-server [flags]", "");
  backend.Register(flags);
  flags.SetEnvironmentPrefix(kEnvironmentPrefix);
  return flags.Parse(args);
}

absl::StatusOr<runtime::BackendOptions> Options(const std::vector<std::string>& args) {
  BackendFlags backend;
  if (absl::Status parsed = Parse(backend, args); !parsed.ok()) return parsed;
  return backend.Options();
}

TEST(BackendFlagsTest, NoFlagsGiveTheRuntimesDefaults) {
  const absl::StatusOr<runtime::BackendOptions> options = Options({});
  ASSERT_TRUE(options.ok()) << options.status();
  const runtime::BackendOptions defaults;
  EXPECT_EQ(options->kind, BackendChoice::kAuto);
  EXPECT_THAT(options->devices, IsEmpty()) << "all";
  EXPECT_EQ(options->device.streams, 0u);
  EXPECT_EQ(options->device.staging_buffers, 16u);
  EXPECT_EQ(options->device.staging_buffer_bytes, defaults.device.staging_buffer_bytes);
  EXPECT_EQ(options->auto_cpu_below_bytes, defaults.auto_cpu_below_bytes);
  EXPECT_TRUE(options->measured_placement) << "--auto-cpu-below=measured";
  EXPECT_EQ(options->split_above_bytes, defaults.split_above_bytes);
}

TEST(BackendFlagsTest, EveryFlagSetsItsTypedOption) {
  const absl::StatusOr<runtime::BackendOptions> options =
      Options({"--backend=cuda", "--worker-threads=3", "--devices=2,0", "--cuda-streams=6",
               "--staging-buffers=5", "--staging-buffer-bytes=1MiB", "--copy-threads=7",
               "--auto-cpu-below=4KiB", "--split-above=0"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->kind, BackendChoice::kCuda);
  EXPECT_EQ(options->worker_threads, 3u);
  EXPECT_THAT(options->devices, ElementsAre(2, 0));
  EXPECT_EQ(options->device.streams, 6u);
  EXPECT_EQ(options->device.staging_buffers, 5u);
  EXPECT_EQ(options->device.staging_buffer_bytes, uint64_t{1} << 20);
  EXPECT_EQ(options->device.copy_threads, 7u);
  EXPECT_EQ(options->auto_cpu_below_bytes, 4096u);
  EXPECT_FALSE(options->measured_placement) << "a size: the threshold, not the measured costs";
  EXPECT_EQ(options->split_above_bytes, 0u);
  EXPECT_EQ(Options({"--backend=cpu"})->kind, BackendChoice::kCpu);
}

TEST(BackendFlagsTest, TheHostRegionSplitIsAutoOffOrAShare) {
  EXPECT_LT(Options({})->host_cpu_share, 0) << "auto: measured at the self-check";
  EXPECT_LT(Options({"--host-region-split=auto"})->host_cpu_share, 0);
  EXPECT_EQ(Options({"--host-region-split=off"})->host_cpu_share, 0);
  EXPECT_EQ(Options({"--host-region-split=0.25"})->host_cpu_share, 0.25);
  EXPECT_EQ(Options({"--host-region-split=1"})->host_cpu_share, 1);
  for (const std::string bad : {"1.5", "-0.1", "half", "nan", ""}) {
    const absl::StatusOr<runtime::BackendOptions> refused = Options({"--host-region-split=" + bad});
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_THAT(std::string(refused.status().message()),
                HasSubstr("--host-region-split=" + bad + ": expected auto, off or a share"));
  }
}

TEST(BackendFlagsTest, TheAutoCpuCrossoverIsMeasuredOrASize) {
  EXPECT_TRUE(Options({"--auto-cpu-below=measured"})->measured_placement);
  const absl::StatusOr<runtime::BackendOptions> zero = Options({"--auto-cpu-below=0"});
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_FALSE(zero->measured_placement);
  EXPECT_EQ(zero->auto_cpu_below_bytes, 0u) << "every auto request on a GPU";
  for (const std::string bad : {"measure", "-1", "1.1KiB", ""}) {
    const absl::StatusOr<runtime::BackendOptions> refused = Options({"--auto-cpu-below=" + bad});
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_THAT(std::string(refused.status().message()),
                HasSubstr("--auto-cpu-below=" + bad + ": expected measured or a size"));
  }
}

TEST(BackendFlagsTest, CudaStreamsNeedNoWarning) {
  BackendFlags backend;
  ASSERT_TRUE(Parse(backend, {"--cuda-streams=6"}).ok());
  EXPECT_EQ(backend.Options()->device.streams, 6u);
  EXPECT_EQ(backend.DeprecationWarning(), "");
}

TEST(BackendFlagsTest, TheOldStreamsFlagStillWorksWithAWarning) {
  BackendFlags backend;
  ASSERT_TRUE(Parse(backend, {"--streams=3"}).ok());
  EXPECT_EQ(backend.Options()->device.streams, 3u);
  EXPECT_THAT(backend.DeprecationWarning(),
              HasSubstr("--streams (GPUREDUCE_STREAMS) is deprecated: use --cuda-streams "
                        "(GPUREDUCE_CUDA_STREAMS), CUDA streams per GPU"));
}

TEST(BackendFlagsTest, CudaStreamsWinOverTheOldName) {
  BackendFlags backend;
  ASSERT_TRUE(Parse(backend, {"--streams=3", "--cuda-streams=5"}).ok());
  EXPECT_EQ(backend.Options()->device.streams, 5u);
  EXPECT_THAT(backend.DeprecationWarning(),
              HasSubstr("--cuda-streams=5 is given too and wins over --streams=3"));
}

TEST(BackendFlagsTest, TheOldNameFromTheEnvironmentWarnsToo) {
  ASSERT_EQ(setenv("GPUREDUCE_STREAMS", "4", 1), 0);
  BackendFlags backend;
  const absl::Status parsed = Parse(backend, {});
  unsetenv("GPUREDUCE_STREAMS");
  ASSERT_TRUE(parsed.ok()) << parsed;
  EXPECT_EQ(backend.Options()->device.streams, 4u);
  EXPECT_THAT(backend.DeprecationWarning(), HasSubstr("deprecated"));
}

TEST(BackendFlagsTest, ABadStreamCountNamesTheFlagItCameFrom) {
  const absl::Status old_name = Options({"--streams=many"}).status();
  EXPECT_EQ(old_name.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(old_name.message(), HasSubstr("--streams=many: "));
  EXPECT_THAT(Options({"--cuda-streams=-1"}).status().message(), HasSubstr("cuda-streams"));
}

TEST(BackendFlagsTest, DeviceListsAreAllOrIndicesEachOnce) {
  EXPECT_THAT(*ParseDeviceList("all"), IsEmpty());
  EXPECT_THAT(*ParseDeviceList("0"), ElementsAre(0));
  EXPECT_THAT(*ParseDeviceList("0,2"), ElementsAre(0, 2));
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"0,x",
            "--devices=0,x: 'x' is not a GPU index; expected 'all' or GPU indices such "
            "as 0,1"},
           {"-1", "--devices=-1: '-1' is not a GPU index"},
           {"0,,1", "--devices=0,,1: '' is not a GPU index"},
           {"", "--devices=: '' is not a GPU index"},
           {"ALL", "--devices=ALL: 'ALL' is not a GPU index"},
           {"1,1", "--devices=1,1: GPU 1 is listed twice; list each GPU once"}}) {
    const absl::Status status = Options({"--devices=" + text}).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(status.message(), HasSubstr(message)) << text;
  }
}

TEST(BackendFlagsTest, AnUnknownBackendIsAParseErrorNamingTheChoices) {
  BackendFlags backend;
  const absl::Status status = Parse(backend, {"--backend=tpu"});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("auto"));
  EXPECT_THAT(status.message(), HasSubstr("cuda"));
}

TEST(BackendFlagsTest, TheBackendsErrorsNameTheFlagsThatAskedForIt) {
  runtime::BackendOptions options;
  options.kind = BackendChoice::kCuda;
  options.devices = {999};
  const absl::Status status = CreateBackendFromFlags(options).status();
  ASSERT_FALSE(status.ok());
  if (runtime::HasCudaBackend()) {
    // No GPU here, or no GPU 999 on a GPU host: either way the runtime's words, prefixed.
    EXPECT_TRUE(absl::StartsWith(status.message(), "--backend=cuda --devices=999: "))
        << status.message();
  } else {
    EXPECT_THAT(status.message(), HasSubstr("--backend=cuda: this build of gpureduce-server has "
                                            "no CUDA backend"));
  }
}

TEST(BackendFlagsTest, TheCpuChoiceStartsTheCpuBackend) {
  runtime::BackendOptions options;
  options.kind = BackendChoice::kCpu;
  options.worker_threads = 1;
  const absl::StatusOr<std::unique_ptr<runtime::Backend>> backend = CreateBackendFromFlags(options);
  ASSERT_TRUE(backend.ok()) << backend.status();
  EXPECT_EQ((*backend)->kind(), kernels::BackendKind::kCpu);
  EXPECT_EQ((*backend)->workers(), 1u);
}

}  // namespace
}  // namespace gpureduce::server
