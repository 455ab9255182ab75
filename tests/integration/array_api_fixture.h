#pragma once

// The array API suites' shared fixture (array_api_test.cc, array_api_edges_test.cc,
// array_api_refusals_test.cc): one real server for the suite, on the test backend (the CPU
// server; "gpu." with GPUREDUCE_TEST_BACKEND=cuda), checked after every test.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/array_api_cases.h"
#include "tests/integration/server_process.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"
#include "tests/support/wire.h"

namespace gpureduce::testing::array_api {

inline constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr size_t kMillion = 1000003;

class ArrayApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    shared_.Start({"--allow-shared-memory", "--max-request-bytes=16MiB"});
  }
  static void TearDownTestSuite() { shared_.Stop(); }

  void SetUp() override {
    REQUIRE_SHARED_SERVER(shared_);
    reducer_ = shared_.get()->Connect();
    h_ = std::make_unique<Harness>(reducer_->stub());
    seed_ = FreshSeed();
  }

  // After every test (refusals included) the same server still answers a float64 and a legacy
  // float32 request correctly: nothing was disturbed.
  void TearDown() override {
    if (reducer_ == nullptr) return;  // skipped
    const Array a = RandomArray(v1::FLOAT64, 4097, seed_ + 99);
    ExpectAnswers(h_->Reduce(a, {v1::SUM, v1::ARGMAX}), {v1::SUM, v1::ARGMAX}, a, 0, "after");
    const std::vector<float> data = MixedSignData(4097, seed_);
    auto got = reducer_->Reduce(Spec(v1::SUM), data);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(
        CheckAgainstReference(Op::kSum, ComputeReference(Op::kSum, data), got->value(), -1, 1e-9),
        "");
  }

  static void ExpectRefused(const Outcome& got, grpc::StatusCode code, const std::string& says) {
    EXPECT_EQ(got.status.error_code(), code) << got.status.error_message();
    EXPECT_THAT(got.status.error_message(), ::testing::HasSubstr(says));
  }

  static SharedServer shared_;
  std::unique_ptr<client::ReducerClient> reducer_;
  std::unique_ptr<Harness> h_;
  uint64_t seed_ = 0;
};

inline SharedServer ArrayApiTest::shared_;

}  // namespace gpureduce::testing::array_api
