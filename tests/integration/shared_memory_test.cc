// Reductions by reference to system shared memory through the real server: every op against the
// float64 reference at odd offsets and sizes, concurrent requests on one region, a region
// unregistered, truncated or unlinked while the server holds it. The refusals are in
// shared_memory_refusals_test.cc.

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/shared_memory/shared_memory_object.h"
#include "common/reduction/op_name.h"
#include "gtest/gtest.h"
#include "tests/integration/server_process.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"

namespace gpureduce::testing {
namespace {

using gpureduce::Op;

constexpr double kTolerance = 1e-9;     // the default kernels accumulate in float64
constexpr uint64_t kRegionOffset = 12;  // the region starts 3 floats into its object

v1::ReduceSpec SpecFor(Op op) {
  v1::ReduceSpec spec;
  spec.set_op(static_cast<v1::Op>(op));
  return spec;
}

// An object holding `data` after kRegionOffset bytes of padding.
client::SharedMemoryObject ObjectWith(const std::vector<float>& data) {
  absl::StatusOr<client::SharedMemoryObject> object =
      client::SharedMemoryObject::Create(kRegionOffset + data.size() * sizeof(float));
  EXPECT_TRUE(object.ok()) << object.status();
  std::memcpy(static_cast<char*>(object->data()) + kRegionOffset, data.data(),
              data.size() * sizeof(float));
  return std::move(*object);
}

std::string Register(client::ReducerClient& reducer, const client::SharedMemoryObject& object,
                     uint64_t floats) {
  const std::string name = object.region_name();
  absl::StatusOr<v1::SharedMemoryRegion> region =
      reducer.RegisterSystemSharedMemory(name, object.key(), kRegionOffset, floats * sizeof(float));
  EXPECT_TRUE(region.ok()) << region.status();
  return name;
}

void ExpectReduces(client::ReducerClient& reducer, const std::string& region, Op op,
                   const std::vector<float>& data, size_t first, size_t count) {
  const std::string how = absl::StrCat(gpureduce::OpName(op), " of ", count, " floats from ", first,
                                       " in region ", region);
  const std::span<const float> slice(data.data() + first, count);
  absl::StatusOr<v1::ReduceResponse> got =
      reducer.ReduceShared(SpecFor(op), region, first * sizeof(float), count * sizeof(float));
  ASSERT_TRUE(got.ok()) << how << ": " << got.status();
  EXPECT_EQ(got->count(), count) << how;
  EXPECT_EQ(got->timing().bytes(), count * sizeof(float)) << how;
  EXPECT_EQ(got->backend(), TestBackend()) << how;
  // One device: the CPU backend's 0, or the GPU (a host split's CPU part is not a server device).
  EXPECT_EQ(got->device_indices_size(), 1) << how;
  EXPECT_EQ(CheckAgainstReference(op, ComputeReference(op, slice), got->value(), got->index(),
                                  kTolerance),
            "")
      << how;
}

class SharedMemoryTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { shared_.Start({"--allow-shared-memory"}); }
  static void TearDownTestSuite() { shared_.Stop(); }
  void SetUp() override {
    REQUIRE_SHARED_SERVER(shared_);
    reducer_ = shared_.get()->Connect();
  }
  void TearDown() override {
    if (reducer_ != nullptr) (void)reducer_->UnregisterAllSharedMemory();
  }

  static SharedServer shared_;
  std::unique_ptr<client::ReducerClient> reducer_;
};

SharedServer SharedMemoryTest::shared_;

TEST_F(SharedMemoryTest, EveryOpMatchesTheReferenceAtOddOffsetsAndSizes) {
  constexpr size_t kFloats = 1000003 + 40;
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  const std::vector<float> mixed = MixedSignData(kFloats, seed);
  const std::vector<float> near_one = NearOneData(kFloats, seed + 1);
  const client::SharedMemoryObject mixed_object = ObjectWith(mixed);
  const client::SharedMemoryObject near_one_object = ObjectWith(near_one);
  const std::string mixed_region = Register(*reducer_, mixed_object, kFloats);
  const std::string near_one_region = Register(*reducer_, near_one_object, kFloats);
  for (Op op : gpureduce::kClassicOps) {
    const bool prod = op == Op::kProd;
    for (const auto& [first, count] : std::vector<std::pair<size_t, size_t>>{
             {0, 1}, {7, 2}, {1, 31}, {13, 1000}, {37, 1000003}, {0, kFloats}}) {
      ExpectReduces(*reducer_, prod ? near_one_region : mixed_region, op, prod ? near_one : mixed,
                    first, count);
    }
  }
}

TEST_F(SharedMemoryTest, AnEmptyReferenceIsAnEmptyArray) {
  const client::SharedMemoryObject object = ObjectWith(MixedSignData(8, FreshSeed()));
  const std::string region = Register(*reducer_, object, 8);
  absl::StatusOr<v1::ReduceResponse> sum = reducer_->ReduceShared(SpecFor(Op::kSum), region, 4, 0);
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_EQ(sum->count(), 0u);
  EXPECT_EQ(sum->value(), 0.0);
  absl::StatusOr<v1::ReduceResponse> min = reducer_->ReduceShared(SpecFor(Op::kMin), region, 4, 0);
  EXPECT_EQ(min.status().code(), absl::StatusCode::kInvalidArgument) << min.status();
}

TEST_F(SharedMemoryTest, ConcurrentRequestsOnOneRegionAreAllRight) {
  constexpr size_t kFloats = 1 << 20;
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  const std::vector<float> data = MixedSignData(kFloats, seed);
  const client::SharedMemoryObject object = ObjectWith(data);
  const std::string region = Register(*reducer_, object, kFloats);
  std::vector<std::thread> clients;
  for (int c = 0; c < 6; ++c) {
    clients.emplace_back([&, c] {
      std::unique_ptr<client::ReducerClient> own = shared_.get()->Connect();
      for (int i = 0; i < 8; ++i) {
        const Op op = gpureduce::kClassicOps[(c + i) % std::size(gpureduce::kClassicOps)];
        if (op == Op::kProd) continue;  // mixed-sign products of this length over/underflow
        const size_t first = (c * 7919 + i * 104729) % (kFloats / 2);
        ExpectReduces(*own, region, op, data, first, kFloats / 2 - c);
      }
    });
  }
  for (std::thread& thread : clients) thread.join();
}

TEST_F(SharedMemoryTest, ARegionUnregisteredDuringARequestServesItToTheEnd) {
  constexpr size_t kFloats = size_t{24} << 20;  // 96 MiB: long enough to catch in flight
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  const std::vector<float> data = MixedSignData(kFloats, seed);
  const client::SharedMemoryObject object = ObjectWith(data);
  int caught_in_flight = 0;
  for (int attempt = 0; attempt < 10 && caught_in_flight < 2; ++attempt) {
    const std::string region = Register(*reducer_, object, kFloats);
    std::future<absl::StatusOr<v1::ReduceResponse>> reduced = std::async(std::launch::async, [&] {
      return shared_.get()->Connect()->ReduceShared(SpecFor(Op::kSum), region, 0,
                                                    kFloats * sizeof(float));
    });
    // Unregister once the server reports the request reading the region.
    bool in_flight = false;
    while (!in_flight &&
           reduced.wait_for(std::chrono::microseconds(100)) != std::future_status::ready) {
      absl::StatusOr<v1::ListSharedMemoryResponse> listed = reducer_->ListSharedMemory();
      ASSERT_TRUE(listed.ok()) << listed.status();
      in_flight = !listed->regions().empty() && listed->regions(0).requests_in_flight() > 0;
    }
    ASSERT_TRUE(reducer_->UnregisterSharedMemory(region).ok());
    absl::StatusOr<v1::ReduceResponse> got = reduced.get();
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(CheckAgainstReference(Op::kSum, ComputeReference(Op::kSum, data), got->value(),
                                    got->index(), kTolerance),
              "");
    caught_in_flight += in_flight ? 1 : 0;
    // Gone for every later request.
    absl::StatusOr<v1::ReduceResponse> after =
        reducer_->ReduceShared(SpecFor(Op::kSum), region, 0, 4);
    EXPECT_EQ(after.status().code(), absl::StatusCode::kNotFound) << after.status();
  }
  EXPECT_GT(caught_in_flight, 0) << "no request was caught in flight in 10 attempts";
}

TEST_F(SharedMemoryTest, AnUnlinkedObjectStaysReadableWhileRegistered) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  const std::vector<float> data = MixedSignData(100003, seed);
  client::SharedMemoryObject object = ObjectWith(data);
  const std::string region = Register(*reducer_, object, data.size());
  ASSERT_TRUE(object.Close().ok());  // unmapped and unlinked by its owner
  ExpectReduces(*reducer_, region, Op::kSum, data, 0, data.size());
  ExpectReduces(*reducer_, region, Op::kArgMax, data, 5, data.size() - 5);
}

// How a server answers for a region whose object its owner truncated after registration:
// - the CPU reads the object through its descriptor and finds it short: FAILED_PRECONDITION
//   saying so (the CPU backend, and a CUDA server whose CPU reads its share of the region beside
//   the GPU, --host-region-split, where that share lies past the new end);
// - a GPU alone copies from the pages pinned at registration, which truncation takes out of the
//   object but not from the pin: the values they held, the whole array as registered, never a
//   fault (`gpu_alone`: the server runs no host split).
// Either way what is still in the object reads right and the server serves everyone else. What
// docs/shared-memory.md promises.
void ExpectTruncationFailsOnlyItsRequests(client::ReducerClient& reducer, bool gpu_alone) {
  constexpr size_t kFloats = 1 << 20;
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  const std::vector<float> data = MixedSignData(kFloats, seed);
  const client::SharedMemoryObject object = ObjectWith(data);
  const std::string region = Register(reducer, object, kFloats);
  // The owner shrinks it after registration to 1 MiB, a whole number of pages: the region's
  // first kFloats / 4 - 3 floats stay in the object, and no page it keeps is partly cleared.
  const off_t kept_bytes = off_t{1} << 20;
  const int fd = shm_open(object.key().c_str(), O_RDWR, 0);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_EQ(ftruncate(fd, kept_bytes), 0) << std::strerror(errno);
  close(fd);
  const Reference whole_reference = ComputeReference(Op::kSum, data);
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<v1::ReduceResponse> whole =
        reducer.ReduceShared(SpecFor(Op::kSum), region, 0, kFloats * sizeof(float));
    if (gpu_alone) {
      ASSERT_TRUE(whole.ok()) << whole.status();
      EXPECT_EQ(whole->count(), kFloats);
      EXPECT_EQ(CheckAgainstReference(Op::kSum, whole_reference, whole->value(), whole->index(),
                                      kTolerance),
                "");
    } else if (TestBackend() == "cpu" || !whole.ok()) {
      EXPECT_EQ(whole.status().code(), absl::StatusCode::kFailedPrecondition) << whole.status();
      EXPECT_TRUE(absl::StrContains(whole.status().message(), "truncated")) << whole.status();
    } else {  // the GPU alone after all (no CPU share yet): the array as registered
      EXPECT_EQ(CheckAgainstReference(Op::kSum, whole_reference, whole->value(), whole->index(),
                                      kTolerance),
                "");
    }
  }
  ExpectReduces(reducer, region, Op::kMax, data, 0, kFloats / 4 - 3);
  absl::StatusOr<bool> serving = reducer.IsServing();
  ASSERT_TRUE(serving.ok()) << serving.status();
  EXPECT_TRUE(*serving);
  const std::vector<float> other = MixedSignData(1000, seed + 7);
  const client::SharedMemoryObject other_object = ObjectWith(other);
  ExpectReduces(reducer, Register(reducer, other_object, other.size()), Op::kSum, other, 0,
                other.size());
}

TEST_F(SharedMemoryTest, ATruncatedObjectFailsItsRequestsAndNothingElse) {
  ExpectTruncationFailsOnlyItsRequests(*reducer_, /*gpu_alone=*/false);
}

TEST(SharedMemoryGpuAloneTest, ATruncatedObjectReadsAsRegisteredByAGpuAlone) {
  if (TestBackend() != "cuda") {
    GTEST_SKIP() << "the GPU's pinned pages: a CUDA server only (GPUREDUCE_TEST_BACKEND=cuda)";
  }
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::Start({"--allow-shared-memory", "--host-region-split=off"});
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  std::unique_ptr<client::ReducerClient> reducer = (*server)->Connect();
  ExpectTruncationFailsOnlyItsRequests(*reducer, /*gpu_alone=*/true);
  (void)reducer->UnregisterAllSharedMemory();
}

TEST_F(SharedMemoryTest, ListShowsTheRegionsAndUnregisterAllRemovesThem) {
  const client::SharedMemoryObject a = ObjectWith(MixedSignData(10, FreshSeed()));
  const client::SharedMemoryObject b = ObjectWith(MixedSignData(20, FreshSeed()));
  const std::string name_a = Register(*reducer_, a, 10);
  const std::string name_b = Register(*reducer_, b, 20);
  absl::StatusOr<v1::ListSharedMemoryResponse> listed = reducer_->ListSharedMemory();
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->regions_size(), 2);
  EXPECT_EQ(listed->total_bytes(), 30 * sizeof(float));
  for (const v1::SharedMemoryRegion& region : listed->regions()) {
    const bool is_a = region.name() == name_a;
    EXPECT_EQ(region.kind(), v1::SharedMemoryRegion::SYSTEM);
    EXPECT_EQ(region.key(), is_a ? a.key() : b.key());
    EXPECT_EQ(region.offset(), kRegionOffset);
    EXPECT_EQ(region.byte_size(), (is_a ? 10 : 20) * sizeof(float));
    EXPECT_EQ(region.device_id(), -1);
    EXPECT_GT(region.register_us(), 0);
  }
  absl::StatusOr<std::vector<std::string>> removed = reducer_->UnregisterAllSharedMemory();
  ASSERT_TRUE(removed.ok()) << removed.status();
  std::vector<std::string> expected = {name_a, name_b};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(*removed, expected);
  listed = reducer_->ListSharedMemory();
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->regions_size(), 0);
  EXPECT_EQ(listed->total_bytes(), 0u);
  absl::StatusOr<v1::ServerInfo> info = reducer_->GetServerInfo();
  ASSERT_TRUE(info.ok());
  EXPECT_TRUE(info->shared_memory());
}

}  // namespace
}  // namespace gpureduce::testing
