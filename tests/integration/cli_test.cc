// The gpureduce CLI as a user runs it: inputs, output formats and exit codes.

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/server_process.h"
#include "tests/integration/test_files.h"
#include "tests/support/npy_bytes.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"

namespace gpureduce::testing {
namespace {

using ::testing::HasSubstr;

struct CliRun {
  int exit_code;
  std::string out;
  std::string err;
};

// Every test process gets its own files: ctest runs test cases in parallel.
std::string ScratchPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/gpureduce-cli-", getpid(), "-", name);
}

class CliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { shared_.Start({}); }
  static void TearDownTestSuite() { shared_.Stop(); }
  void SetUp() override {
    REQUIRE_SHARED_SERVER(shared_);
    server_ = shared_.get();
  }

  // Runs `gpureduce <args> --target <server>` through the shell (so `args` may redirect stdin).
  CliRun Cli(const std::string& args, bool with_target = true) {
    const std::string out = ScratchPath("out"), err = ScratchPath("err");
    const std::string command =
        absl::StrCat(CliBinary(), " ", args, with_target ? " --target=" + server_->target() : "",
                     " >", out, " 2>", err);
    const int status = std::system(command.c_str());
    CliRun run{WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadWholeFile(out),
               ReadWholeFile(err)};
    std::remove(out.c_str());
    std::remove(err.c_str());
    return run;
  }

  static SharedServer shared_;
  ServerProcess* server_ = nullptr;
};

SharedServer CliTest::shared_;

std::string WriteNpy(const std::vector<float>& data) {
  const std::string path = ScratchPath("input.npy");
  std::ofstream out(path, std::ios::binary);
  out << NpyHeaderBytes(
      1, absl::StrCat("{'descr': '<f4', 'fortran_order': False, 'shape': (", data.size(), ",), }"));
  out.write(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(float));
  return path;
}

TEST_F(CliTest, ReducesAnNpyFileStreamedAndMatchesTheReference) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  const std::vector<float> data = MixedSignData(1000003, seed);
  const std::string npy = WriteNpy(data);
  const CliRun run = Cli("reduce --op argmin --chunk-size=256KiB --json " + npy);
  std::remove(npy.c_str());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Reference ref = ComputeReference(gpureduce::Op::kArgMin, data);
  EXPECT_THAT(run.out, HasSubstr(absl::StrCat("\"index\":", ref.index)));
  EXPECT_THAT(run.out, HasSubstr("\"count\":1000003"));
  EXPECT_THAT(run.out, HasSubstr("\"streamed\":true"));
}

TEST_F(CliTest, RandomInputWithVerifyReportsAgreement) {
  const CliRun run = Cli("reduce --random 3000017 --seed 11 --op sum --verify");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("(3000017 floats"));
  EXPECT_THAT(run.out, HasSubstr(": OK"));
  EXPECT_THAT(run.out,
              HasSubstr(absl::StrCat("kernel ", TestDefaultKernel(), ", backend ", TestBackend())));
}

TEST_F(CliTest, TheCpuKernelIsAnsweredByEveryServer) {
  // A CUDA server runs it too, on its CPU: the answer says so.
  const CliRun run = Cli("reduce --random 1000003 --seed 5 --op sum --kernel cpu --verify");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr(": OK"));
  EXPECT_THAT(run.out, HasSubstr("kernel cpu, backend cpu"));
}

TEST_F(CliTest, TextOnStdinGoesInOneMessage) {
  const std::string path = ScratchPath("input.txt");
  std::ofstream(path) << "1.5, -2.5\n4e0  # comment\n";
  const CliRun run = Cli("reduce --op mean --json - < " + path);
  std::remove(path.c_str());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("\"value\":1,"));
  EXPECT_THAT(run.out, HasSubstr("\"streamed\":false"));
}

TEST_F(CliTest, ServerRefusalExitsOneWithTheGrpcCode) {
  // A kernel no backend has: refused by every server.
  const CliRun run = Cli("reduce --random 10 --kernel fastest");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, HasSubstr("INVALID_ARGUMENT"));
}

TEST_F(CliTest, UsageErrorsExitTwo) {
  EXPECT_EQ(Cli("reduce --random 10 --op median").exit_code, 2);
  EXPECT_EQ(Cli("reduce /no/such/file.npy").exit_code, 2);
  EXPECT_EQ(Cli("reduce").exit_code, 2);
  EXPECT_EQ(Cli("frobnicate", false).exit_code, 2);
  const CliRun help = Cli("reduce --help", false);
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("--chunk-size"));
}

TEST_F(CliTest, KernelsInfoAndHealth) {
  const CliRun kernels = Cli("kernels");
  ASSERT_EQ(kernels.exit_code, 0) << kernels.err;
  EXPECT_THAT(kernels.out, HasSubstr(TestDefaultKernel()));
  const CliRun info = Cli("info --json");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_THAT(info.out, HasSubstr("\"backend\":\"" + TestBackend() + "\""));
  const CliRun health = Cli("health");
  EXPECT_EQ(health.exit_code, 0) << health.err;
  EXPECT_THAT(health.out, HasSubstr("SERVING"));
  const CliRun unreachable = Cli("health --target=127.0.0.1:1 --timeout=1s", false);
  EXPECT_EQ(unreachable.exit_code, 1);
}

}  // namespace
}  // namespace gpureduce::testing
