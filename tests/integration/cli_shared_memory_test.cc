// `gpureduce reduce --shared-memory` and `gpureduce shared-memory` as a user runs them against
// the real server on this host: every float32 op by reference in one request against the float64
// reference, the registration report, nothing left registered or in /dev/shm afterwards, and a
// server without --allow-shared-memory refusing (signals: cli_shared_memory_kill_test.cc; other
// dtypes, --ddof and the new ops: cli_shared_memory_dtype_test.cc).

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/shared_memory/shared_memory_object.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/integration/cli_shared_memory_fixture.h"
#include "tests/integration/server_process.h"
#include "tests/integration/test_files.h"
#include "tests/support/npy_bytes.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"

extern char** environ;

namespace gpureduce::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr double kTolerance = 1e-9;  // the default kernels accumulate in float64
constexpr char kEveryOpButProd[] = "sum,min,max,mean,sum_squares,argmin,argmax";
constexpr char kEveryOp[] = "prod,sum,min,max,mean,sum_squares,argmin,argmax";

// Every test process gets its own files: ctest runs test cases in parallel.
std::string ScratchPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/gpureduce-cli-shm-", getpid(), "-", name);
}

std::string WriteNpy(const std::vector<float>& data) {
  const std::string path = ScratchPath("input.npy");
  std::ofstream out(path, std::ios::binary);
  out << NpyHeaderBytes(
      1, absl::StrCat("{'descr': '<f4', 'fortran_order': False, 'shape': (", data.size(), ",), }"));
  out.write(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(float));
  return path;
}

gpureduce::Op OpNamed(const std::string& name) {
  static const std::pair<const char*, gpureduce::Op> kNames[] = {
      {"sum", gpureduce::Op::kSum},       {"prod", gpureduce::Op::kProd},
      {"min", gpureduce::Op::kMin},       {"max", gpureduce::Op::kMax},
      {"mean", gpureduce::Op::kMean},     {"sum_squares", gpureduce::Op::kSumSquares},
      {"argmin", gpureduce::Op::kArgMin}, {"argmax", gpureduce::Op::kArgMax}};
  for (const auto& [text, op] : kNames) {
    if (name == text) return op;
  }
  ADD_FAILURE() << "unknown op " << name;
  return gpureduce::Op::kSum;
}

class CliSharedMemoryTest : public CliSharedMemoryFixture<::testing::Test> {
 protected:
  // Reduces `data` by reference with `ops` in one request and checks every answer: the first
  // op's float64 value, and each op's result as float32 holds it (one rounding of the float64
  // answer: within 2^-23 of its scale).
  void ExpectEveryOpCorrect(const std::vector<float>& data, const std::string& ops) {
    const std::string npy = WriteNpy(data);
    const CliRun run =
        Cli(absl::StrCat("reduce --shared-memory --json --verify --op ", ops, " ", npy));
    std::remove(npy.c_str());
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const std::vector<std::string> names = absl::StrSplit(ops, ',');
    const nlohmann::json line = nlohmann::json::parse(run.out);
    SCOPED_TRACE(line.dump());
    EXPECT_EQ(line["count"], data.size());
    EXPECT_EQ(line["backend"], TestBackend());
    EXPECT_EQ(line["timing"]["bytes"], data.size() * sizeof(float));
    ASSERT_TRUE(line["value"].is_number()) << "the reference has no NaN or infinity here";
    const gpureduce::Op first = OpNamed(names[0]);
    EXPECT_EQ(
        CheckAgainstReference(first, ComputeReference(first, data), line["value"].get<double>(),
                              line["index"].get<int64_t>(), kTolerance),
        "");
    ASSERT_EQ(line["results"].size(), names.size());
    ASSERT_EQ(line["verify_results"].size(), names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      const nlohmann::json& result = line["results"][i];
      ASSERT_EQ(result["op"], names[i]);
      const gpureduce::Op op = OpNamed(names[i]);
      EXPECT_EQ(result["dtype"],
                op == gpureduce::Op::kArgMin || op == gpureduce::Op::kArgMax ? "int64" : "float32");
      EXPECT_EQ(CheckAgainstReference(op, ComputeReference(op, data), result["value"].get<double>(),
                                      result["index"].get<int64_t>(), 0x1p-23),
                "");
      EXPECT_EQ(line["verify_results"][i]["ok"], true);
    }
    const nlohmann::json& shm = line["client"]["shared_memory"];
    EXPECT_THAT(shm["key"].get<std::string>(), HasSubstr(absl::StrCat("/gpureduce-", run.pid)));
    EXPECT_EQ(shm["bytes"], std::max<size_t>(data.size(), 1) * sizeof(float));
    EXPECT_GT(shm["register_us"].get<double>(), 0);
    EXPECT_GT(shm["client_register_us"].get<double>(), 0);
    ExpectNothingLeft(run);
  }
};

class CliSharedMemoryOpsTest : public CliSharedMemoryTest,
                               public ::testing::WithParamInterface<size_t> {};

TEST_P(CliSharedMemoryOpsTest, MixedSignInputEveryOpInOneListMatchesTheReference) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  ExpectEveryOpCorrect(MixedSignData(GetParam(), seed), kEveryOpButProd);
}

// PROD of mixed magnitudes overflows at these sizes; near-one values keep it meaningful.
TEST_P(CliSharedMemoryOpsTest, NearOneInputAllEightOpsInOneListMatchTheReference) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  ExpectEveryOpCorrect(NearOneData(GetParam(), seed), kEveryOp);
}

INSTANTIATE_TEST_SUITE_P(AwkwardSizes, CliSharedMemoryOpsTest, ::testing::Values(1, 31, 1000003));

TEST_F(CliSharedMemoryTest, TextReportsRegistrationOnceAndEveryOpInOneRequest) {
  const CliRun run = Cli("reduce --shared-memory --random 100003 --seed 5 --op sum,max --verify");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr(absl::StrCat("shared memory: /gpureduce-", run.pid, "-")));
  EXPECT_THAT(run.out, HasSubstr(", 400012 bytes, registered as gpureduce-"));
  EXPECT_THAT(run.out, HasSubstr("ms to map and pin); input loaded in"));
  EXPECT_THAT(run.out, HasSubstr("sum = "));
  EXPECT_THAT(run.out, HasSubstr("(100003 floats, random"));
  EXPECT_THAT(run.out, HasSubstr("GB/s end to end (by reference to shared memory region "));
  EXPECT_THAT(run.out, Not(HasSubstr("MISMATCH")));
  EXPECT_EQ(std::vector<std::string>(absl::StrSplit(run.out, ": OK")).size(), 3u) << run.out;
  // The registration line, then the one request's answer, its two typed results, kernel,
  // server, client and a verify line per op.
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1 + 1 + 2 + 3 + 2) << run.out;
  EXPECT_THAT(run.out, HasSubstr("result: sum = "));
  EXPECT_THAT(run.out, HasSubstr("result: max = "));
  // Unregistered and removed on the way out.
  ExpectNothingLeft(run);
}

TEST_F(CliSharedMemoryTest, StdinOfUnknownLengthAndAnEmptyInput) {
  const std::string path = ScratchPath("input.txt");
  std::ofstream(path) << "1.5, -2.5\n4e0  # comment\n";
  const CliRun text = Cli("reduce --shared-memory --op mean,sum,argmax --json - < " + path);
  std::remove(path.c_str());
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const nlohmann::json answer = nlohmann::json::parse(text.out);
  ASSERT_EQ(answer["results"].size(), 3u) << text.out;
  EXPECT_EQ(answer["results"][0]["value"], 1);
  EXPECT_EQ(answer["results"][1]["value"], 3);
  EXPECT_EQ(answer["results"][2]["index"], 2);

  const CliRun empty = Cli("reduce --shared-memory --random 0 --op sum,prod --json");
  ASSERT_EQ(empty.exit_code, 0) << empty.err;
  const nlohmann::json sums = nlohmann::json::parse(empty.out);
  ASSERT_EQ(sums["results"].size(), 2u) << empty.out;
  EXPECT_EQ(sums["results"][0]["value"], 0);
  EXPECT_EQ(sums["results"][1]["value"], 1);
  EXPECT_EQ(sums["count"], 0);
}

TEST_F(CliSharedMemoryTest, ListAndUnregisterCommands) {
  std::unique_ptr<client::ReducerClient> reducer = server_->Connect();
  absl::StatusOr<client::SharedMemoryObject> a = client::SharedMemoryObject::Create(4096);
  absl::StatusOr<client::SharedMemoryObject> b = client::SharedMemoryObject::Create(1024);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  ASSERT_TRUE(reducer->RegisterSystemSharedMemory("region-a", a->key(), 0, 4096).ok());
  ASSERT_TRUE(reducer->RegisterSystemSharedMemory("region-b", b->key(), 512, 512).ok());

  const CliRun json = Cli("shared-memory list --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json listed = nlohmann::json::parse(json.out);
  ASSERT_EQ(listed["regions"].size(), 2u) << json.out;
  EXPECT_EQ(listed["total_bytes"], 4096 + 512);
  EXPECT_GT(listed["max_regions"].get<int>(), 0);
  for (const nlohmann::json& region : listed["regions"]) {
    EXPECT_EQ(region["kind"], "system");
    if (region["name"] == "region-b") {
      EXPECT_EQ(region["key"], b->key());
      EXPECT_EQ(region["offset"], 512);
      EXPECT_EQ(region["byte_size"], 512);
    }
  }
  const CliRun text = Cli("shared-memory list");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("region-a"));
  EXPECT_THAT(text.out, HasSubstr(a->key()));
  EXPECT_THAT(text.out, HasSubstr("2 regions, 4608 bytes"));

  const CliRun one = Cli("shared-memory unregister region-a");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_THAT(one.out, HasSubstr("unregistered region-a"));
  const CliRun again = Cli("shared-memory unregister region-a");
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_THAT(again.err, HasSubstr("NOT_FOUND"));

  ASSERT_TRUE(reducer->RegisterSystemSharedMemory("region-c", a->key(), 0, 4096).ok());
  const CliRun all = Cli("shared-memory unregister --all --json");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_THAT(nlohmann::json::parse(all.out)["unregistered"],
              ::testing::UnorderedElementsAre("region-b", "region-c"));
  const CliRun none = Cli("shared-memory list");
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_THAT(none.out, HasSubstr("no regions"));

  EXPECT_EQ(Cli("shared-memory unregister").exit_code, 2);
  EXPECT_EQ(Cli("shared-memory unregister x --all").exit_code, 2);
  EXPECT_EQ(Cli("shared-memory frobnicate").exit_code, 2);
}

TEST_F(CliSharedMemoryTest, InfoSaysSharedMemoryIsAccepted) {
  const CliRun info = Cli("info --json");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_THAT(info.out, HasSubstr("\"shared_memory\":true"));
}

TEST_F(CliSharedMemoryTest, UsageErrorsExitTwoAndHelpExplains) {
  EXPECT_EQ(Cli("reduce --shared-memory --streams 2 --random 10").exit_code, 2);
  EXPECT_EQ(Cli("reduce --shared-memory --values --random 10").exit_code, 2);
  EXPECT_EQ(Cli("reduce --shared-memory --op sum,median --random 10").exit_code, 2);
  EXPECT_EQ(Cli("reduce --shared-memory /no/such/file.npy").exit_code, 2);
  const CliRun help = RunCli("reduce --help", "");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("--shared-memory"));
  EXPECT_THAT(help.out, HasSubstr("--allow-shared-memory"));
}

// A server without --allow-shared-memory refuses at registration, before any input is loaded.
TEST(CliSharedMemoryOffTest, ServerWithoutTheFlagRefusesWithPermissionDenied) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start({});
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  const CliRun run =
      RunCli("reduce --shared-memory --random 1000 --op sum,min", (*server)->target());
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.err, HasSubstr("gpureduce reduce: the server refused: PERMISSION_DENIED: "));
  EXPECT_THAT(run.err, HasSubstr("--allow-shared-memory"));
  EXPECT_THAT(run.out, IsEmpty());
  EXPECT_THAT(ShmObjectsOf(run.pid), IsEmpty());

  const CliRun list = RunCli("shared-memory list", (*server)->target());
  EXPECT_EQ(list.exit_code, 1);
  EXPECT_THAT(list.err, HasSubstr("PERMISSION_DENIED"));
  const CliRun info = RunCli("info --json", (*server)->target());
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_THAT(info.out, HasSubstr("\"shared_memory\":false"));
}

}  // namespace
}  // namespace gpureduce::testing
