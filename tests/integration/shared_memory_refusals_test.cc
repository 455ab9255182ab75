// Every refusal of the shared-memory RPCs through the real server: each a precise status, none
// disturbing the server. The reductions themselves are in shared_memory_test.cc.

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/shared_memory/shared_memory_object.h"
#include "gtest/gtest.h"
#include "tests/integration/server_process.h"

namespace gpureduce::testing {
namespace {

using absl::StatusCode;

v1::ReduceSpec Sum() {
  v1::ReduceSpec spec;
  spec.set_op(v1::SUM);
  return spec;
}

client::SharedMemoryObject MakeObject(uint64_t bytes) {
  absl::StatusOr<client::SharedMemoryObject> object = client::SharedMemoryObject::Create(bytes);
  EXPECT_TRUE(object.ok()) << object.status();
  return std::move(*object);
}

#define EXPECT_CODE(expr, expected_code, fragment)                          \
  do {                                                                      \
    const absl::Status _status = (expr).status();                           \
    EXPECT_EQ(_status.code(), expected_code) << #expr << ": " << _status;   \
    EXPECT_TRUE(absl::StrContains(_status.message(), fragment)) << _status; \
  } while (false)

TEST(SharedMemoryRefusalTest, AServerWithoutTheFlagRefusesEverything) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start({});
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  std::unique_ptr<client::ReducerClient> reducer = (*server)->Connect();
  const client::SharedMemoryObject object = MakeObject(64);
  EXPECT_CODE(reducer->RegisterSystemSharedMemory("r", object.key(), 0, 64),
              StatusCode::kPermissionDenied, "--allow-shared-memory");
  EXPECT_CODE(reducer->RegisterCudaSharedMemory("r", std::string(64, '\0'), 0, 0, 64),
              StatusCode::kPermissionDenied, "--allow-shared-memory");
  EXPECT_CODE(reducer->ListSharedMemory(), StatusCode::kPermissionDenied, "--allow-shared-memory");
  EXPECT_CODE(reducer->UnregisterAllSharedMemory(), StatusCode::kPermissionDenied,
              "--allow-shared-memory");
  EXPECT_CODE(reducer->ReduceShared(Sum(), "r", 0, 64), StatusCode::kPermissionDenied,
              "--allow-shared-memory");
  absl::StatusOr<v1::ServerInfo> info = reducer->GetServerInfo();
  ASSERT_TRUE(info.ok());
  EXPECT_FALSE(info->shared_memory());
}

class SharedMemoryRefusalsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    shared_.Start({"--allow-shared-memory", "--shared-memory-max-regions=3",
                   "--shared-memory-max-bytes=1MiB"});
  }
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

SharedServer SharedMemoryRefusalsTest::shared_;

TEST_F(SharedMemoryRefusalsTest, NamesAndKeysThatCouldReachElsewhereAreInvalid) {
  const client::SharedMemoryObject object = MakeObject(64);
  for (const std::string& key : std::vector<std::string>{
           "", "no-slash", "/", "/a/b", "/..", "/.", "/../etc/passwd", "//dev/shm/x", "/x y",
           std::string("/a\0b", 4), "/" + std::string(256, 'k')}) {
    EXPECT_CODE(reducer_->RegisterSystemSharedMemory("r", key, 0, 64), StatusCode::kInvalidArgument,
                "");
  }
  for (const std::string& name :
       std::vector<std::string>{"", "a/b", "a b", std::string(129, 'n'), "..\n"}) {
    EXPECT_CODE(reducer_->RegisterSystemSharedMemory(name, object.key(), 0, 64),
                StatusCode::kInvalidArgument, "region name");
  }
}

TEST_F(SharedMemoryRefusalsTest, ASymbolicLinkInDevShmIsRefused) {
  const client::SharedMemoryObject object = MakeObject(64);
  const std::string link = absl::StrCat("/gpureduce-test-link-", getpid());
  ASSERT_EQ(symlink(("/dev/shm" + object.key()).c_str(), ("/dev/shm" + link).c_str()), 0);
  EXPECT_CODE(reducer_->RegisterSystemSharedMemory("r", link, 0, 64), StatusCode::kInvalidArgument,
              "shm_open");
  unlink(("/dev/shm" + link).c_str());
}

TEST_F(SharedMemoryRefusalsTest, AFifoInDevShmIsRefusedWithoutWaitingForAWriter) {
  const std::string fifo = absl::StrCat("/gpureduce-test-fifo-", getpid());
  ASSERT_EQ(mkfifo(("/dev/shm" + fifo).c_str(), 0600), 0) << std::strerror(errno);
  client::CallOptions options;
  options.timeout = absl::Seconds(10);
  EXPECT_CODE(reducer_->RegisterSystemSharedMemory("fifo", fifo, 0, 64, options),
              StatusCode::kInvalidArgument, "not a regular");
  unlink(("/dev/shm" + fifo).c_str());
}

TEST(SharedMemoryKeyPrefixTest, OnlyObjectsWithThePrefixAreMapped) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::Start({"--allow-shared-memory", "--shared-memory-key-prefix=/gpureduce-"});
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  std::unique_ptr<client::ReducerClient> reducer = (*server)->Connect();
  const client::SharedMemoryObject object = MakeObject(64);  // "/gpureduce-<pid>-<hex>"
  EXPECT_TRUE(reducer->RegisterSystemSharedMemory("mine", object.key(), 0, 64).ok());
  EXPECT_CODE(reducer->RegisterSystemSharedMemory("other", "/psm_0123abcd", 0, 64),
              StatusCode::kPermissionDenied, "--shared-memory-key-prefix");
}

TEST_F(SharedMemoryRefusalsTest, ObjectsThatDoNotHoldTheRegionAreRefused) {
  const client::SharedMemoryObject object = MakeObject(4096);
  EXPECT_CODE(reducer_->RegisterSystemSharedMemory("r", "/gpureduce-no-such-object-x", 0, 64),
              StatusCode::kNotFound, "no shared-memory object");
  EXPECT_CODE(reducer_->RegisterSystemSharedMemory("r", object.key(), 4096, 4),
              StatusCode::kInvalidArgument, "past the end");
  EXPECT_CODE(reducer_->RegisterSystemSharedMemory("r", object.key(), 4, 4096),
              StatusCode::kInvalidArgument, "past the end");
  // Past the server's byte limit before anything is opened.
  EXPECT_CODE(
      reducer_->RegisterSystemSharedMemory("r", object.key(), uint64_t{1} << 63, uint64_t{1} << 63),
      StatusCode::kResourceExhausted, "--shared-memory-max-bytes");
  EXPECT_CODE(reducer_->RegisterSystemSharedMemory("r", object.key(), 1, 64),
              StatusCode::kInvalidArgument, "multiples of 2");
  EXPECT_CODE(reducer_->RegisterSystemSharedMemory("r", object.key(), 0, 7),
              StatusCode::kInvalidArgument, "multiples of 2");
  EXPECT_CODE(reducer_->RegisterSystemSharedMemory("r", object.key(), 0, 0),
              StatusCode::kInvalidArgument, "must not be 0");
  absl::StatusOr<v1::ListSharedMemoryResponse> listed = reducer_->ListSharedMemory();
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->regions_size(), 0) << "a refused registration left a region behind";
  EXPECT_EQ(listed->total_bytes(), 0u);
}

TEST_F(SharedMemoryRefusalsTest, ARegionOfHalfWordsServesTheDTypesItsAddressesAlign) {
  const client::SharedMemoryObject object = MakeObject(4096);
  // 31 float16s from byte 2: neither end on a 4-byte word.
  ASSERT_TRUE(reducer_->RegisterSystemSharedMemory("halves", object.key(), 2, 62).ok());
  v1::ReduceSpec halves = Sum();
  halves.set_dtype(v1::FLOAT16);
  absl::StatusOr<v1::ReduceResponse> reduced = reducer_->ReduceShared(halves, "halves", 0, 62);
  ASSERT_TRUE(reduced.ok()) << reduced.status();
  EXPECT_EQ(reduced->count(), 31u);
  // float32 values there would start at byte 2 of the object: refused, naming the address.
  EXPECT_CODE(reducer_->ReduceShared(Sum(), "halves", 0, 60), StatusCode::kInvalidArgument,
              "values at byte 2, not a multiple of 4");
  reduced = reducer_->ReduceShared(Sum(), "halves", 2, 60);
  ASSERT_TRUE(reduced.ok()) << reduced.status();
  EXPECT_EQ(reduced->count(), 15u);
  EXPECT_CODE(reducer_->ReduceShared(halves, "halves", 0, 63), StatusCode::kInvalidArgument,
              "byte_size (63) must be a multiple of 2");
}

TEST_F(SharedMemoryRefusalsTest, TheLimitsAndDuplicateNamesAreEnforced) {
  const client::SharedMemoryObject object = MakeObject(1 << 20);
  ASSERT_TRUE(reducer_->RegisterSystemSharedMemory("a", object.key(), 0, 4096).ok());
  EXPECT_CODE(reducer_->RegisterSystemSharedMemory("a", object.key(), 0, 4096),
              StatusCode::kAlreadyExists, "already registered");
  EXPECT_CODE(reducer_->RegisterSystemSharedMemory("big", object.key(), 0, 1 << 20),
              StatusCode::kResourceExhausted, "--shared-memory-max-bytes");
  ASSERT_TRUE(reducer_->RegisterSystemSharedMemory("b", object.key(), 0, 4096).ok());
  ASSERT_TRUE(reducer_->RegisterSystemSharedMemory("c", object.key(), 4096, 4096).ok());
  EXPECT_CODE(reducer_->RegisterSystemSharedMemory("d", object.key(), 0, 4096),
              StatusCode::kResourceExhausted, "--shared-memory-max-regions");
  ASSERT_TRUE(reducer_->UnregisterSharedMemory("b").ok());
  EXPECT_TRUE(reducer_->RegisterSystemSharedMemory("d", object.key(), 0, 4096).ok());
}

TEST_F(SharedMemoryRefusalsTest, BadReferencesAreRefused) {
  const client::SharedMemoryObject object = MakeObject(4096);
  ASSERT_TRUE(reducer_->RegisterSystemSharedMemory("r", object.key(), 0, 4096).ok());
  EXPECT_CODE(reducer_->ReduceShared(Sum(), "nope", 0, 4), StatusCode::kNotFound, "\"nope\"");
  EXPECT_CODE(reducer_->ReduceShared(Sum(), "r", 4092, 8), StatusCode::kInvalidArgument,
              "past the end");
  EXPECT_CODE(reducer_->ReduceShared(Sum(), "r", uint64_t{1} << 63, uint64_t{1} << 63),
              StatusCode::kInvalidArgument, "past the end");
  EXPECT_CODE(reducer_->ReduceShared(Sum(), "r", 1, 4), StatusCode::kInvalidArgument,
              "values at byte 1, not a multiple of 4");
  EXPECT_CODE(reducer_->ReduceShared(Sum(), "r", 0, 7), StatusCode::kInvalidArgument,
              "byte_size (7) must be a multiple of 4");
  v1::ReduceSpec declared = Sum();
  declared.set_expected_count(5);
  EXPECT_CODE(reducer_->ReduceShared(declared, "r", 0, 40), StatusCode::kInvalidArgument,
              "expected_count");
  // A reference and `values` together.
  v1::ReduceRequest both;
  *both.mutable_spec() = Sum();
  both.mutable_shared_memory()->set_region("r");
  both.mutable_shared_memory()->set_byte_size(4);
  both.add_values(1.0f);
  v1::ReduceResponse response;
  grpc::ClientContext context;
  const grpc::Status status = reducer_->stub().Reduce(&context, both, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_TRUE(absl::StrContains(status.error_message(), "both payloads")) << status.error_message();
}

TEST_F(SharedMemoryRefusalsTest, UnregisterNeedsARegionOrAll) {
  EXPECT_CODE(reducer_->UnregisterSharedMemory("missing"), StatusCode::kNotFound, "\"missing\"");
  v1::UnregisterSharedMemoryRequest both;
  both.set_name("x");
  both.set_all(true);
  v1::UnregisterSharedMemoryResponse response;
  grpc::ClientContext context;
  EXPECT_EQ(reducer_->stub().UnregisterSharedMemory(&context, both, &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(SharedMemoryRefusalsTest, CudaRegionsNeedTheCudaBackendAndARealHandle) {
  const absl::StatusOr<v1::SharedMemoryRegion> garbage =
      reducer_->RegisterCudaSharedMemory("g", std::string(64, '\x5a'), 0, 0, 64);
  if (TestBackend() == "cpu") {
    EXPECT_CODE(garbage, StatusCode::kFailedPrecondition, "CUDA backend");
  } else {
    EXPECT_CODE(garbage, StatusCode::kInvalidArgument, "IPC handle");
    EXPECT_CODE(reducer_->RegisterCudaSharedMemory("g", std::string(64, '\0'), 99, 0, 64),
                StatusCode::kFailedPrecondition, "GPU 99");
    EXPECT_CODE(reducer_->RegisterCudaSharedMemory("g", std::string(10, '\0'), 0, 0, 64),
                StatusCode::kInvalidArgument, "64");
  }
  absl::StatusOr<bool> serving = reducer_->IsServing();
  ASSERT_TRUE(serving.ok());
  EXPECT_TRUE(*serving);
}

}  // namespace
}  // namespace gpureduce::testing
