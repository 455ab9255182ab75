// Several GPUs in one server: a large request spread over every GPU answers as one GPU would
// (unary, a stream that declares its count, a system shared-memory region), a small one runs on
// one GPU, a pinned one on the GPU it names, and a load of small requests keeps every GPU busy.
// Skips with the reason where the machine has no GPU, or one.

#include <cmath>
#include <cstring>
#include <future>
#include <limits>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/shared_memory/shared_memory_object.h"
#include "common/reduction/op_name.h"
#include "gtest/gtest.h"
#include "tests/integration/server_process.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"

namespace gpureduce::testing {
namespace {

using gpureduce::Op;

v1::ReduceSpec SpecFor(Op op, uint64_t expected_count = 0) {
  v1::ReduceSpec spec;
  spec.set_op(static_cast<v1::Op>(op));
  spec.set_expected_count(expected_count);
  return spec;
}

std::string Check(Op op, std::span<const float> data,
                  const absl::StatusOr<v1::ReduceResponse>& got) {
  if (!got.ok()) return got.status().ToString();
  return CheckAgainstReference(op, ComputeReference(op, data), got->value(), got->index(), 1e-9);
}

std::string Devices(const v1::ReduceResponse& response) {
  return absl::StrJoin(response.device_indices(), ",");
}

class MultiGpuTest : public ::testing::Test {
 protected:
  // Requests of 1 MiB or more are spread over every GPU.
  static void SetUpTestSuite() {
    shared_.Start({"--split-above=1MiB", "--allow-shared-memory"}, "cuda");
  }
  static void TearDownTestSuite() { shared_.Stop(); }
  void SetUp() override {
    REQUIRE_SHARED_SERVER(shared_);
    reducer_ = shared_.get()->Connect();
    absl::StatusOr<v1::ServerInfo> info = reducer_->GetServerInfo();
    ASSERT_TRUE(info.ok()) << info.status();
    gpus_ = info->devices_size();
    if (gpus_ < 2) GTEST_SKIP() << "needs two GPUs; the server has " << gpus_;
  }

  std::string AllGpus() const {
    std::vector<int> all;
    for (int i = 0; i < gpus_; ++i) all.push_back(i);
    return absl::StrJoin(all, ",");
  }

  static SharedServer shared_;
  std::unique_ptr<client::ReducerClient> reducer_;
  int gpus_ = 0;
};

SharedServer MultiGpuTest::shared_;

TEST_F(MultiGpuTest, ALargeRequestIsSpreadOverEveryGpuAndAnswersAsOne) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  for (Op op : gpureduce::kClassicOps) {
    for (size_t n : {size_t{1000003}, size_t{4194305}}) {
      const std::vector<float> data =
          op == Op::kProd ? NearOneData(n, seed + n) : MixedSignData(n, seed + n);
      const std::string what = absl::StrCat(gpureduce::OpName(op), " of ", n);
      absl::StatusOr<v1::ReduceResponse> unary = reducer_->Reduce(SpecFor(op), data);
      EXPECT_EQ(Check(op, data, unary), "") << what << " unary";
      if (unary.ok()) EXPECT_EQ(Devices(*unary), AllGpus()) << what;
      // A stream that declares its count is spread too, its chunks dealt over the GPUs.
      absl::StatusOr<v1::ReduceResponse> streamed =
          StreamFloats(*reducer_, SpecFor(op, n), data, 65537);
      EXPECT_EQ(Check(op, data, streamed), "") << what << " streamed";
      if (streamed.ok()) EXPECT_EQ(Devices(*streamed), AllGpus()) << what;
    }
  }
}

TEST_F(MultiGpuTest, TiesAndNaNsAcrossTheGpusKeepTheFirstOccurrence) {
  const size_t n = 2000003;
  std::vector<float> data = MixedSignData(n, FreshSeed());
  for (size_t at : {size_t{1900000}, size_t{1000002}, size_t{1500000}}) data[at] = -4096.0f;
  absl::StatusOr<v1::ReduceResponse> got = reducer_->Reduce(SpecFor(Op::kArgMin), data);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->index(), 1000002);
  EXPECT_EQ(Devices(*got), AllGpus());
  data[1700000] = std::numeric_limits<float>::quiet_NaN();
  data[600000] = std::numeric_limits<float>::quiet_NaN();
  for (Op op : {Op::kArgMax, Op::kMin}) {
    got = StreamFloats(*reducer_, SpecFor(op, n), data, 100003);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(std::isnan(got->value())) << gpureduce::OpName(op);
    if (op == Op::kArgMax) EXPECT_EQ(got->index(), 600000);
  }
}

TEST_F(MultiGpuTest, ASystemRegionIsReadByEveryGpuInRanges) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  const size_t n = 3000017;
  const std::vector<float> data = MixedSignData(n, seed);
  absl::StatusOr<client::SharedMemoryObject> object =
      client::SharedMemoryObject::Create(n * sizeof(float));
  ASSERT_TRUE(object.ok()) << object.status();
  std::memcpy(object->data(), data.data(), n * sizeof(float));
  const std::string region = object->region_name();
  ASSERT_TRUE(
      reducer_->RegisterSystemSharedMemory(region, object->key(), 0, n * sizeof(float)).ok());
  for (Op op : gpureduce::kClassicOps) {
    if (op == Op::kProd) continue;  // mixed magnitudes overflow a product; covered above
    for (size_t first : {size_t{0}, size_t{7}}) {
      const size_t count = n - first - 3;
      absl::StatusOr<v1::ReduceResponse> got =
          reducer_->ReduceShared(SpecFor(op), region, first * sizeof(float), count * sizeof(float));
      const std::string what = absl::StrCat(gpureduce::OpName(op), " from ", first);
      EXPECT_EQ(Check(op, std::span<const float>(data).subspan(first, count), got), "") << what;
      if (got.ok()) EXPECT_EQ(Devices(*got), AllGpus()) << what;
    }
  }
  EXPECT_TRUE(reducer_->UnregisterSharedMemory(region).ok());
}

TEST_F(MultiGpuTest, SmallAndPinnedRequestsRunOnOneGpuAndLoadReachesEvery) {
  const std::vector<float> data = MixedSignData(262143, FreshSeed());  // under --split-above
  for (int device = 0; device < gpus_; ++device) {
    v1::ReduceSpec spec = SpecFor(Op::kSum);
    spec.set_device(device);
    absl::StatusOr<v1::ReduceResponse> got = reducer_->Reduce(spec, data);
    EXPECT_EQ(Check(Op::kSum, data, got), "");
    if (got.ok()) EXPECT_EQ(Devices(*got), absl::StrCat(device));
  }
  // Concurrent small requests go to the GPU with the fewest bytes outstanding: every GPU serves.
  std::set<std::string> used;
  std::mutex mu;
  std::vector<std::thread> clients;
  for (int c = 0; c < 8; ++c) {
    clients.emplace_back([&] {
      std::unique_ptr<client::ReducerClient> reducer = shared_.get()->Connect();
      for (int i = 0; i < 20; ++i) {
        absl::StatusOr<v1::ReduceResponse> got = reducer->Reduce(SpecFor(Op::kMax), data);
        EXPECT_EQ(Check(Op::kMax, data, got), "");
        if (!got.ok()) continue;
        EXPECT_EQ(got->device_indices_size(), 1);
        std::lock_guard<std::mutex> lock(mu);
        used.insert(Devices(*got));
      }
    });
  }
  for (std::thread& client : clients) client.join();
  EXPECT_EQ(static_cast<int>(used.size()), gpus_) << absl::StrJoin(used, " ");
}

}  // namespace
}  // namespace gpureduce::testing
