// CUDA shared memory through the server with --backend=cuda: this process allocates device
// memory, hands the server its IPC handle, and the server reduces it in place. Without a GPU every
// test skips with the reason.

#include <cuda_runtime_api.h>

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/reduction/op_name.h"
#include "gtest/gtest.h"
#include "tests/integration/server_process.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"

namespace gpureduce::testing {
namespace {

using gpureduce::Op;

constexpr uint64_t kRegionOffset = 12;  // the region starts 3 floats into the allocation

v1::ReduceSpec SpecFor(Op op, const std::string& kernel = "auto") {
  v1::ReduceSpec spec;
  spec.set_op(static_cast<v1::Op>(op));
  spec.set_kernel(kernel);
  return spec;
}

// `data` on GPU 0 after kRegionOffset bytes, and its IPC handle; freed on destruction.
class DeviceArray {
 public:
  explicit DeviceArray(const std::vector<float>& data) {
    bytes_ = kRegionOffset + data.size() * sizeof(float);
    status_ = cudaMalloc(&base_, bytes_);
    if (status_ != cudaSuccess) return;
    status_ = cudaMemcpy(static_cast<char*>(base_) + kRegionOffset, data.data(),
                         data.size() * sizeof(float), cudaMemcpyHostToDevice);
    if (status_ != cudaSuccess) return;
    cudaIpcMemHandle_t handle;
    status_ = cudaIpcGetMemHandle(&handle, base_);
    handle_.assign(handle.reserved, sizeof(handle.reserved));
  }
  ~DeviceArray() {
    if (base_ != nullptr) cudaFree(base_);
  }
  cudaError_t status() const { return status_; }
  const std::string& handle() const { return handle_; }
  uint64_t bytes() const { return bytes_; }

 private:
  void* base_ = nullptr;
  uint64_t bytes_ = 0;
  std::string handle_;
  cudaError_t status_ = cudaSuccess;
};

class CudaSharedMemoryTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { shared_.Start({"--allow-shared-memory"}); }
  static void TearDownTestSuite() { shared_.Stop(); }
  void SetUp() override {
    if (TestBackend() != "cuda") {
      GTEST_SKIP() << "CUDA shared memory needs the CUDA backend: the GPU suite runs with "
                      "GPUREDUCE_TEST_BACKEND=cuda";
    }
    REQUIRE_SHARED_SERVER(shared_);
    reducer_ = shared_.get()->Connect();
  }
  void TearDown() override {
    if (reducer_ != nullptr) (void)reducer_->UnregisterAllSharedMemory();
  }

  std::string Register(const DeviceArray& array, uint64_t floats) {
    const std::string name = absl::StrCat("cuda-", ++regions_);
    absl::StatusOr<v1::SharedMemoryRegion> region = reducer_->RegisterCudaSharedMemory(
        name, array.handle(), 0, kRegionOffset, floats * sizeof(float));
    EXPECT_TRUE(region.ok()) << region.status();
    if (region.ok()) {
      EXPECT_EQ(region->kind(), v1::SharedMemoryRegion::CUDA);
    }
    return name;
  }

  void ExpectReduces(const std::string& region, const v1::ReduceSpec& spec,
                     const std::vector<float>& data, size_t first, size_t count,
                     double tolerance = 1e-9) {
    const Op op = static_cast<Op>(spec.op());
    const std::string how = absl::StrCat(gpureduce::OpName(op), " on ", spec.kernel(), " of ",
                                         count, " floats from ", first);
    absl::StatusOr<v1::ReduceResponse> got =
        reducer_->ReduceShared(spec, region, first * sizeof(float), count * sizeof(float));
    ASSERT_TRUE(got.ok()) << how << ": " << got.status();
    EXPECT_EQ(got->count(), count) << how;
    EXPECT_EQ(got->backend(), "cuda") << how;
    EXPECT_EQ(got->timing().h2d_us(), 0) << how << ": device memory needs no copy";
    const std::span<const float> slice(data.data() + first, count);
    EXPECT_EQ(CheckAgainstReference(op, ComputeReference(op, slice), got->value(), got->index(),
                                    tolerance),
              "")
        << how;
  }

  static SharedServer shared_;
  std::unique_ptr<client::ReducerClient> reducer_;
  int regions_ = 0;
};

SharedServer CudaSharedMemoryTest::shared_;

TEST_F(CudaSharedMemoryTest, EveryOpInPlaceMatchesTheReferenceAtOddOffsetsAndSizes) {
  constexpr size_t kFloats = 1000003 + 40;
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  const std::vector<float> mixed = MixedSignData(kFloats, seed);
  const std::vector<float> near_one = NearOneData(kFloats, seed + 1);
  const DeviceArray mixed_array(mixed), near_one_array(near_one);
  ASSERT_EQ(mixed_array.status(), cudaSuccess) << cudaGetErrorString(mixed_array.status());
  ASSERT_EQ(near_one_array.status(), cudaSuccess);
  const std::string mixed_region = Register(mixed_array, kFloats);
  const std::string near_one_region = Register(near_one_array, kFloats);
  for (Op op : gpureduce::kClassicOps) {
    const bool prod = op == Op::kProd;
    for (const std::string kernel : {"auto", "cub"}) {
      for (const auto& [first, count] : std::vector<std::pair<size_t, size_t>>{
               {0, 1}, {7, 2}, {1, 31}, {13, 1000}, {37, 1000003}, {0, kFloats}}) {
        ExpectReduces(prod ? near_one_region : mixed_region, SpecFor(op, kernel),
                      prod ? near_one : mixed, first, count);
      }
    }
  }
  // A ladder kernel (float32 sums) and a paced one read the same memory.
  ExpectReduces(mixed_region, SpecFor(Op::kSum, "warp_shuffle"), mixed, 5, 1000003, 1e-3);
  ExpectReduces(mixed_region, SpecFor(Op::kMax, "atomic_global"), mixed, 3, 1000003, 0);
}

TEST_F(CudaSharedMemoryTest, ConcurrentRequestsOnOneRegionAreAllRight) {
  constexpr size_t kFloats = size_t{1} << 22;
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  const std::vector<float> data = MixedSignData(kFloats, seed);
  const DeviceArray array(data);
  ASSERT_EQ(array.status(), cudaSuccess);
  const std::string region = Register(array, kFloats);
  std::vector<std::future<void>> clients;
  for (int c = 0; c < 6; ++c) {
    clients.push_back(std::async(std::launch::async, [&, c] {
      auto own = shared_.get()->Connect();
      for (int i = 0; i < 8; ++i) {
        const size_t first = (c * 7919 + i * 104729) % (kFloats / 2);
        absl::StatusOr<v1::ReduceResponse> got =
            own->ReduceShared(SpecFor(Op::kArgMax), region, first * 4, (kFloats / 2) * 4);
        const std::span<const float> slice(data.data() + first, kFloats / 2);
        EXPECT_TRUE(got.ok()) << got.status();
        if (got.ok()) {
          EXPECT_EQ(CheckAgainstReference(Op::kArgMax, ComputeReference(Op::kArgMax, slice),
                                          got->value(), got->index(), 0),
                    "");
        }
      }
    }));
  }
  for (auto& client : clients) client.get();
}

TEST_F(CudaSharedMemoryTest, ARegionUnregisteredDuringARequestServesItToTheEnd) {
  // atomic_global MAX in paced launches: about 20 ms for 2^25 floats, long enough to catch.
  constexpr size_t kFloats = size_t{1} << 25;
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  const std::vector<float> data = MixedSignData(kFloats, seed);
  const DeviceArray array(data);
  ASSERT_EQ(array.status(), cudaSuccess);
  const std::string region = Register(array, kFloats);
  std::future<absl::StatusOr<v1::ReduceResponse>> reduced = std::async(std::launch::async, [&] {
    return shared_.get()->Connect()->ReduceShared(SpecFor(Op::kMax, "atomic_global"), region, 0,
                                                  kFloats * sizeof(float));
  });
  bool in_flight = false;
  while (!in_flight &&
         reduced.wait_for(std::chrono::milliseconds(1)) != std::future_status::ready) {
    absl::StatusOr<v1::ListSharedMemoryResponse> listed = reducer_->ListSharedMemory();
    ASSERT_TRUE(listed.ok()) << listed.status();
    in_flight = listed->regions_size() == 1 && listed->regions(0).requests_in_flight() > 0;
  }
  ASSERT_TRUE(in_flight) << "the request ended before it was seen in flight";
  ASSERT_TRUE(reducer_->UnregisterSharedMemory(region).ok());
  absl::StatusOr<v1::ReduceResponse> got = reduced.get();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(CheckAgainstReference(Op::kMax, ComputeReference(Op::kMax, data), got->value(),
                                  got->index(), 0),
            "");
}

TEST_F(CudaSharedMemoryTest, HandlesThatDoNotHoldTheRegionAreRefused) {
  const DeviceArray array(MixedSignData(1000, FreshSeed()));
  ASSERT_EQ(array.status(), cudaSuccess);
  const absl::StatusOr<v1::SharedMemoryRegion> too_long =
      reducer_->RegisterCudaSharedMemory("long", array.handle(), 0, 0, array.bytes() + (4 << 20));
  EXPECT_EQ(too_long.status().code(), absl::StatusCode::kInvalidArgument) << too_long.status();
  EXPECT_TRUE(absl::StrContains(too_long.status().message(), "past the end")) << too_long.status();
  const absl::StatusOr<v1::SharedMemoryRegion> elsewhere =
      reducer_->RegisterCudaSharedMemory("elsewhere", array.handle(), 7, 0, 64);
  EXPECT_EQ(elsewhere.status().code(), absl::StatusCode::kFailedPrecondition) << elsewhere.status();
  absl::StatusOr<v1::ListSharedMemoryResponse> listed = reducer_->ListSharedMemory();
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->regions_size(), 0);
}

}  // namespace
}  // namespace gpureduce::testing
