// Array results written into a shared-memory region the client names (ReduceSpec.output, issue
// 23; docs/shared-memory.md) through the real server: every op's array lands at its announced
// offset (each start at a multiple of 8) and equals the float64 reference of its row, from a
// message, a stream cut inside rows and a shared-memory payload in the same object; nothing
// outside the announced bytes changes; and the refusals (a region not registered writable, too
// small, overlapping the payload, a request that is not an array request, an unknown region),
// each before any data is read, after which the server still answers.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "client/shared_memory/shared_memory_object.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/array_api_cases.h"
#include "tests/integration/server_process.h"
#include "tests/support/random_data.h"

namespace gpureduce::testing::array_api {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kRows = 37;
constexpr uint64_t kColumns = 1001;
constexpr uint64_t kObjectBytes = 1 << 20;
constexpr unsigned char kUntouched = 0xA5;

class ArrayOutputTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { shared_.Start({"--allow-shared-memory"}); }
  static void TearDownTestSuite() { shared_.Stop(); }

  void SetUp() override {
    REQUIRE_SHARED_SERVER(shared_);
    reducer_ = shared_.get()->Connect();
    h_ = std::make_unique<Harness>(reducer_->stub());
    seed_ = FreshSeed();
    SCOPED_TRACE(SeedTrace(seed_));
    absl::StatusOr<client::SharedMemoryObject> object =
        client::SharedMemoryObject::Create(kObjectBytes);
    ASSERT_TRUE(object.ok()) << object.status();
    object_ = std::make_unique<client::SharedMemoryObject>(std::move(*object));
    std::memset(object_->data(), kUntouched, kObjectBytes);
  }
  void TearDown() override {
    if (reducer_ != nullptr) (void)reducer_->UnregisterAllSharedMemory();
  }

  // Registers the whole object as `name`.
  void Register(const std::string& name, bool writable) {
    absl::StatusOr<v1::SharedMemoryRegion> region = reducer_->RegisterSystemSharedMemory(
        name, object_->key(), 0, kObjectBytes, {}, false, writable);
    ASSERT_TRUE(region.ok()) << region.status();
    EXPECT_EQ(region->writable(), writable);
  }

  // Row sums (float32), argmax (int64) and mean (float32) of a (kRows, kColumns) float32 array,
  // into bytes [offset, offset + byte_size) of region `name`.
  static v1::ReduceSpec RowSpec(const std::string& name, uint64_t offset, uint64_t byte_size) {
    v1::ReduceSpec spec = MakeSpec(v1::FLOAT32, {v1::SUM, v1::ARGMAX, v1::MEAN});
    spec.add_shape(kRows);
    spec.add_shape(kColumns);
    spec.add_axes(1);
    v1::SharedMemoryRef* output = spec.mutable_output();
    output->set_region(name);
    output->set_offset(offset);
    output->set_byte_size(byte_size);
    return spec;
  }

  // Checks the response and the object's bytes: op i's array at its offset, nothing else
  // written between `first` and `end` but the arrays, nothing outside them at all.
  void ExpectWritten(const Outcome& got, const Array& a, uint64_t first, uint64_t end) {
    ASSERT_TRUE(got.status.ok()) << got.status.error_message();
    ASSERT_EQ(got.response.results_size(), 3);
    const auto* bytes = static_cast<const unsigned char*>(object_->data());
    const uint64_t sums_at = (first + 7) / 8 * 8;
    const uint64_t args_at = (sums_at + kRows * 4 + 7) / 8 * 8;
    const uint64_t means_at = (args_at + kRows * 8 + 7) / 8 * 8;
    const uint64_t expected_at[] = {sums_at, args_at, means_at};
    for (int i = 0; i < 3; ++i) {
      const v1::OpResult& result = got.response.results(i);
      EXPECT_TRUE(result.has_output_offset()) << i;
      EXPECT_EQ(result.output_offset(), expected_at[i]) << i;
      EXPECT_TRUE(result.data().empty()) << i;
      ASSERT_EQ(result.shape_size(), 1);
      EXPECT_EQ(result.shape(0), kRows);
    }
    ASSERT_LE(means_at + kRows * 4, end);
    for (uint64_t r = 0; r < kRows; ++r) {
      long double sum = 0;
      int64_t arg = 0;
      for (uint64_t c = 0; c < kColumns; ++c) {
        const long double x = a.Float(r * kColumns + c);
        sum += x;
        if (x > a.Float(r * kColumns + arg)) arg = static_cast<int64_t>(c);
      }
      float got_sum = 0, got_mean = 0;
      int64_t got_arg = 0;
      std::memcpy(&got_sum, bytes + sums_at + r * 4, 4);
      std::memcpy(&got_arg, bytes + args_at + r * 8, 8);
      std::memcpy(&got_mean, bytes + means_at + r * 4, 4);
      // Rounded once from float64 (the reference's long double may sit an ulp away).
      const float want_sum = static_cast<float>(sum);
      const float want_mean = static_cast<float>(sum / kColumns);
      EXPECT_LE(std::fabs(got_sum - want_sum),
                std::fabs(std::nextafter(want_sum, INFINITY) - want_sum))
          << "row " << r;
      EXPECT_EQ(got_arg, arg) << "row " << r;
      EXPECT_LE(std::fabs(got_mean - want_mean),
                std::fabs(std::nextafter(want_mean, INFINITY) - want_mean))
          << "row " << r;
    }
    // Outside the arrays (before, in the padding between them, after): as the test left it.
    auto written = [&](uint64_t b) {
      return (b >= sums_at && b < sums_at + kRows * 4) ||
             (b >= args_at && b < args_at + kRows * 8) ||
             (b >= means_at && b < means_at + kRows * 4);
    };
    uint64_t changed = 0;
    for (uint64_t b = 0; b < kObjectBytes; ++b) {
      if (!written(b) && bytes[b] != kUntouched) ++changed;
    }
    EXPECT_EQ(changed, 0u);
  }

  static SharedServer shared_;
  std::unique_ptr<client::ReducerClient> reducer_;
  std::unique_ptr<Harness> h_;
  std::unique_ptr<client::SharedMemoryObject> object_;
  uint64_t seed_ = 0;
};

SharedServer ArrayOutputTest::shared_;

TEST_F(ArrayOutputTest, EveryOpsArrayLandsAtItsOffsetFromAMessageAndAStream) {
  SCOPED_TRACE(SeedTrace(seed_));
  Register("results", true);
  const Array a = RandomArray(v1::FLOAT32, kRows * kColumns, seed_);
  ExpectWritten(h_->Unary(MakeRequest(RowSpec("results", 13, 1000), a)), a, 13, 1013);
  std::memset(object_->data(), kUntouched, kObjectBytes);
  // A stream cut inside rows and elements, into another place.
  ExpectWritten(h_->Stream(Chunks(RowSpec("results", 4096, 600), a.bytes, {4001, 7, 65536})), a,
                4096, 4696);
}

TEST_F(ArrayOutputTest, APayloadInTheSameObjectApartFromTheOutputIsRead) {
  SCOPED_TRACE(SeedTrace(seed_));
  Register("both", true);
  const Array a = RandomArray(v1::FLOAT32, kRows * kColumns, seed_);
  constexpr uint64_t kPayloadAt = 8192;
  auto* bytes = static_cast<char*>(object_->data());
  std::memcpy(bytes + kPayloadAt, a.bytes.data(), a.bytes.size());
  v1::ReduceRequest request;
  *request.mutable_spec() = RowSpec("both", 64, 1000);
  request.mutable_shared_memory()->set_region("both");
  request.mutable_shared_memory()->set_offset(kPayloadAt);
  request.mutable_shared_memory()->set_byte_size(a.bytes.size());
  const Outcome got = h_->Unary(request);
  // The payload's bytes are the test's too: put them back to the marker before the check.
  std::memset(bytes + kPayloadAt, kUntouched, a.bytes.size());
  ExpectWritten(got, a, 64, 1064);

  // The output over the payload's last bytes: refused before anything is read or written.
  std::memcpy(bytes + kPayloadAt, a.bytes.data(), a.bytes.size());
  *request.mutable_spec() = RowSpec("both", kPayloadAt + a.bytes.size() - 8, 1000);
  const Outcome overlapping = h_->Unary(request);
  EXPECT_EQ(overlapping.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(overlapping.status.error_message(), HasSubstr("overlaps the payload"));
  for (uint64_t b = kPayloadAt + a.bytes.size(); b < kPayloadAt + a.bytes.size() + 1000; ++b) {
    ASSERT_EQ(static_cast<unsigned char>(bytes[b]), kUntouched) << "byte " << b;
  }
}

TEST_F(ArrayOutputTest, BadOutputsAreRefusedNamingTheFieldAndTheServerGoesOn) {
  SCOPED_TRACE(SeedTrace(seed_));
  Register("read-only", false);
  Register("results", true);
  const Array a = RandomArray(v1::FLOAT32, kRows * kColumns, seed_);
  struct Case {
    v1::ReduceSpec spec;
    grpc::StatusCode code;
    std::string says;
  };
  v1::ReduceSpec whole = RowSpec("results", 0, 1000);
  whole.clear_shape();
  whole.clear_axes();
  const std::vector<Case> cases = {
      {RowSpec("read-only", 0, 1000), grpc::StatusCode::FAILED_PRECONDITION,
       "was not registered writable"},
      // 37 float32 sums (148 bytes, to 152), 37 int64 (296, to 448), 37 float32 (148): 596.
      {RowSpec("results", 0, 595), grpc::StatusCode::INVALID_ARGUMENT,
       "spec.output.byte_size is 595, but the results take 596 bytes"},
      {RowSpec("results", kObjectBytes - 100, 1000), grpc::StatusCode::INVALID_ARGUMENT,
       "ends past the end of region"},
      {RowSpec("nowhere", 0, 1000), grpc::StatusCode::NOT_FOUND, "nowhere"},
      {whole, grpc::StatusCode::INVALID_ARGUMENT, "set spec.shape or spec.segments"},
  };
  for (const Case& test : cases) {
    const Outcome got = h_->Unary(MakeRequest(test.spec, a));
    EXPECT_EQ(got.status.error_code(), test.code) << got.status.error_message();
    EXPECT_THAT(got.status.error_message(), HasSubstr(test.says));
  }
  const auto* bytes = static_cast<const unsigned char*>(object_->data());
  for (uint64_t b = 0; b < kObjectBytes; ++b) ASSERT_EQ(bytes[b], kUntouched) << "byte " << b;
  ExpectWritten(h_->Unary(MakeRequest(RowSpec("results", 0, 596), a)), a, 0, 596);
}

}  // namespace
}  // namespace gpureduce::testing::array_api
