#pragma once

// The fixture of the `gpureduce reduce --shared-memory` suites (cli_shared_memory_test.cc,
// cli_shared_memory_dtype_test.cc): one server for the suite that lends shared memory, the CLI run
// against it, and the check that a run left nothing behind.

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/server_process.h"
#include "tests/integration/test_files.h"

namespace gpureduce::testing {

// `Base`: ::testing::Test, or TestWithParam<...> for a parameterized suite.
template <typename Base>
class CliSharedMemoryFixture : public Base {
 protected:
  static void SetUpTestSuite() { shared_.Start({"--allow-shared-memory"}); }
  static void TearDownTestSuite() { shared_.Stop(); }
  void SetUp() override {
    REQUIRE_SHARED_SERVER(shared_);
    server_ = shared_.get();
  }

  CliRun Cli(const std::string& args) { return RunCli(args, server_->target()); }

  // Nothing the CLI made outlives it: no object in /dev/shm, no region on the server.
  void ExpectNothingLeft(const CliRun& run) {
    EXPECT_THAT(ShmObjectsOf(run.pid), ::testing::IsEmpty());
    absl::StatusOr<v1::ListSharedMemoryResponse> list = server_->Connect()->ListSharedMemory();
    ASSERT_TRUE(list.ok()) << list.status();
    EXPECT_EQ(list->regions_size(), 0) << list->DebugString();
  }

  static inline SharedServer shared_;
  ServerProcess* server_ = nullptr;
};

}  // namespace gpureduce::testing
