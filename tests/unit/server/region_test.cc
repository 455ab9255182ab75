// A system shared-memory region opened as registration opens it: the checks on the object and
// the bounds, what a request reads (through the descriptor, or the pinned mapping), and the
// region's life after its owner unlinks the object.

#include "server/shared_memory/region.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/random_data.h"
#include "tests/support/stand_in_backend.h"
#include "tests/unit/server/shm_test_object.h"

namespace gpureduce::server {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kPadding = 12;  // the region starts 3 floats into its object

std::span<const std::byte> AsBytes(const std::vector<float>& data) {
  return std::as_bytes(std::span<const float>(data));
}

RegionInfo SystemRegion(const std::string& key, uint64_t offset, uint64_t byte_size) {
  RegionInfo info;
  info.name = "region";
  info.key = key;
  info.offset = offset;
  info.byte_size = byte_size;
  return info;
}

// `count` floats read through a source's descriptor, as the CPU reads them.
std::vector<float> ReadThroughDescriptor(const runtime::SharedSource& source) {
  std::vector<float> read(source.count);
  const ssize_t bytes = pread(source.fd, read.data(), read.size() * sizeof(float),
                              static_cast<off_t>(source.file_offset));
  EXPECT_EQ(bytes, static_cast<ssize_t>(read.size() * sizeof(float)));
  return read;
}

// Records what a backend was asked to pin and whether the hold is still alive.
struct PinRecord {
  const void* base = nullptr;
  size_t bytes = 0;
  bool held = false;
};

class RecordedHold final : public runtime::MemoryHold {
 public:
  explicit RecordedHold(PinRecord& record) : record_(record) { record_.held = true; }
  ~RecordedHold() override { record_.held = false; }

 private:
  PinRecord& record_;
};

class RegionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = testing::FreshSeed();
    data_ = testing::MixedSignData(5003, seed_);  // spans two pages and a bit
  }

  uint64_t seed_ = 0;
  std::vector<float> data_;
  testing::StandInBackend cpu_{kernels::BackendKind::kCpu};
};

TEST_F(RegionTest, ARequestReadsItsSliceThroughTheDescriptorWhereNothingIsPinned) {
  SCOPED_TRACE(testing::SeedTrace(seed_));
  const testing::ShmTestObject object(kPadding + data_.size() * sizeof(float), AsBytes(data_),
                                      kPadding);
  absl::StatusOr<std::shared_ptr<Region>> region =
      Region::OpenSystem(SystemRegion(object.key(), kPadding, data_.size() * 4), cpu_);
  ASSERT_TRUE(region.ok()) << region.status();
  EXPECT_EQ((*region)->info().kind, RegionInfo::Kind::kSystem);
  EXPECT_GE((*region)->info().register_us, 0);
  for (const auto& [first, count] :
       {std::pair<size_t, size_t>{0, data_.size()}, {7, 1}, {1021, 2049}, {data_.size() - 3, 3}}) {
    const runtime::SharedSource source = (*region)->Source(first * 4, count * 4, 4);
    EXPECT_EQ(source.kind, runtime::SharedSource::Kind::kHost);
    EXPECT_EQ(source.count, count);
    EXPECT_EQ(source.file_offset, kPadding + first * 4);
    EXPECT_EQ(source.pinned, nullptr) << "the CPU reads through the descriptor only";
    const std::vector<float> read = ReadThroughDescriptor(source);
    EXPECT_EQ(0, std::memcmp(read.data(), data_.data() + first, count * 4))
        << "floats " << first << " to " << first + count;
  }
}

TEST_F(RegionTest, ABackendThatPinsGetsWholePagesAroundTheRegionUntilTheRegionGoes) {
  SCOPED_TRACE(testing::SeedTrace(seed_));
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t offset = page + kPadding;  // not on a page: the mapping must start before it
  const testing::ShmTestObject object(offset + data_.size() * 4 + page, AsBytes(data_), offset);
  PinRecord pinned;
  testing::StandInBackend gpu(kernels::BackendKind::kCuda);
  gpu.pin = [&](const void* base,
                size_t bytes) -> absl::StatusOr<std::unique_ptr<runtime::MemoryHold>> {
    pinned.base = base;
    pinned.bytes = bytes;
    return std::make_unique<RecordedHold>(pinned);
  };
  absl::StatusOr<std::shared_ptr<Region>> region =
      Region::OpenSystem(SystemRegion(object.key(), offset, data_.size() * 4), gpu);
  ASSERT_TRUE(region.ok()) << region.status();
  EXPECT_TRUE(pinned.held);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(pinned.base) % page, 0u);
  const uint64_t first_page = offset / page * page;
  const uint64_t end = (offset + data_.size() * 4 + page - 1) / page * page;
  EXPECT_EQ(pinned.bytes, end - first_page);

  const runtime::SharedSource source = (*region)->Source(40, 400, 4);
  ASSERT_NE(source.pinned, nullptr);
  EXPECT_EQ(reinterpret_cast<const std::byte*>(source.pinned),
            static_cast<const std::byte*>(pinned.base) + (offset - first_page) + 40);
  EXPECT_EQ(0, std::memcmp(source.pinned, data_.data() + 10, 400))
      << "the pinned mapping holds the region's floats";
  EXPECT_EQ(ReadThroughDescriptor(source),
            std::vector<float>(data_.begin() + 10, data_.begin() + 110));
  region->reset();
  EXPECT_FALSE(pinned.held) << "the region's last holder let go: unpinned";
}

TEST_F(RegionTest, APinRefusedByTheBackendFailsTheRegistrationWithItsError) {
  const testing::ShmTestObject object(4096);
  testing::StandInBackend gpu(kernels::BackendKind::kCuda);
  gpu.pin = [](const void*, size_t) -> absl::StatusOr<std::unique_ptr<runtime::MemoryHold>> {
    return absl::ResourceExhaustedError("cannot pin");
  };
  absl::StatusOr<std::shared_ptr<Region>> region =
      Region::OpenSystem(SystemRegion(object.key(), 0, 4096), gpu);
  EXPECT_EQ(region.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(region.status().message(), "cannot pin");
}

TEST_F(RegionTest, BoundsAlignmentAndKeysAreCheckedBeforeAnythingIsRead) {
  const testing::ShmTestObject object(4096);
  struct Case {
    std::string key;
    uint64_t offset, byte_size;
    absl::StatusCode code;
    const char* says;
  };
  const Case cases[] = {
      {object.key(), 0, 4100, absl::StatusCode::kInvalidArgument, "ends past the end"},
      {object.key(), 4096, 4, absl::StatusCode::kInvalidArgument, "ends past the end"},
      {object.key(), 8192, 4, absl::StatusCode::kInvalidArgument, "holds 4096 bytes"},
      {object.key(), 1, 8, absl::StatusCode::kInvalidArgument, "multiples of 2"},
      {object.key(), 0, 7, absl::StatusCode::kInvalidArgument, "multiples of 2"},
      {object.key(), 0, 0, absl::StatusCode::kInvalidArgument, "must not be 0"},
      {object.key() + "-absent", 0, 4, absl::StatusCode::kNotFound, "no shared-memory object"},
      {"/a/b", 0, 4, absl::StatusCode::kInvalidArgument, "only letters"},
      {"relative", 0, 4, absl::StatusCode::kInvalidArgument, "\"/\" and then its name"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::shared_ptr<Region>> region =
        Region::OpenSystem(SystemRegion(c.key, c.offset, c.byte_size), cpu_);
    const std::string what = absl::StrCat(c.key, " offset ", c.offset, " size ", c.byte_size);
    EXPECT_EQ(region.status().code(), c.code) << what << ": " << region.status();
    EXPECT_THAT(std::string(region.status().message()), HasSubstr(c.says)) << what;
  }
  EXPECT_TRUE(Region::OpenSystem(SystemRegion(object.key(), 4092, 4), cpu_).ok())
      << "the last float of the object is inside it";
}

TEST_F(RegionTest, ALinkOrAFifoInTheSharedMemoryFolderIsRefused) {
  const testing::ShmTestObject object(4096);
  const std::string link = absl::StrCat("gpureduce-region-test-link-", getpid());
  const std::string fifo = absl::StrCat("gpureduce-region-test-fifo-", getpid());
  if (symlink(("/dev/shm" + object.key()).c_str(), ("/dev/shm/" + link).c_str()) != 0 ||
      mkfifo(("/dev/shm/" + fifo).c_str(), 0600) != 0) {
    unlink(("/dev/shm/" + link).c_str());
    GTEST_SKIP() << "cannot make a link and a FIFO in /dev/shm: " << std::strerror(errno);
  }
  absl::StatusOr<std::shared_ptr<Region>> linked =
      Region::OpenSystem(SystemRegion("/" + link, 0, 4), cpu_);
  absl::StatusOr<std::shared_ptr<Region>> piped =
      Region::OpenSystem(SystemRegion("/" + fifo, 0, 4), cpu_);  // must not wait for a writer
  unlink(("/dev/shm/" + link).c_str());
  unlink(("/dev/shm/" + fifo).c_str());
  EXPECT_EQ(linked.status().code(), absl::StatusCode::kInvalidArgument) << linked.status();
  EXPECT_THAT(std::string(linked.status().message()), HasSubstr("symbolic link"));
  EXPECT_EQ(piped.status().code(), absl::StatusCode::kInvalidArgument) << piped.status();
  EXPECT_THAT(std::string(piped.status().message()), HasSubstr("not a regular"));
}

TEST_F(RegionTest, AnUnlinkedObjectStaysReadableAndUsesAreCounted) {
  SCOPED_TRACE(testing::SeedTrace(seed_));
  std::optional<testing::ShmTestObject> object;
  object.emplace(data_.size() * sizeof(float), AsBytes(data_));
  absl::StatusOr<std::shared_ptr<Region>> opened =
      Region::OpenSystem(SystemRegion(object->key(), 0, data_.size() * 4), cpu_);
  ASSERT_TRUE(opened.ok()) << opened.status();
  object.reset();  // unlinked by its owner
  const std::shared_ptr<const Region> region = *opened;
  EXPECT_EQ(ReadThroughDescriptor(region->Source(0, data_.size() * 4, 4)), data_);
  EXPECT_EQ(region->requests_in_flight(), 0u);
  {
    const Region::Use first(region);
    const Region::Use second(region);
    EXPECT_EQ(region->requests_in_flight(), 2u);
  }
  EXPECT_EQ(region->requests_in_flight(), 0u);
}

}  // namespace
}  // namespace gpureduce::server
