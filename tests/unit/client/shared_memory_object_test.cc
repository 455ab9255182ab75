#include "client/shared_memory/shared_memory_object.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpureduce::client {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

bool Exists(const std::string& key) {
  const int fd = shm_open(key.c_str(), O_RDONLY, 0);
  if (fd < 0) return false;
  close(fd);
  return true;
}

// The objects of this process still in /dev/shm ("gpureduce-<pid>-..."): ctest runs each test in
// a process of its own, so another test's objects never count.
std::vector<std::string> OurObjects() {
  std::vector<std::string> names;
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr) return names;
  const std::string prefix = absl::StrCat("gpureduce-", getpid(), "-");
  while (dirent* entry = readdir(dir)) {
    if (absl::StartsWith(entry->d_name, prefix)) names.push_back(entry->d_name);
  }
  closedir(dir);
  return names;
}

TEST(SharedMemoryObjectTest, CreatesAnObjectAnotherMappingSeesAndUnlinksItOnDestruction) {
  std::string key;
  {
    absl::StatusOr<SharedMemoryObject> object = SharedMemoryObject::Create(4000);
    ASSERT_TRUE(object.ok()) << object.status();
    key = object->key();
    EXPECT_THAT(key, MatchesRegex(absl::StrCat("/gpureduce-", getpid(), "-[0-9a-f]{16}")));
    EXPECT_EQ(object->region_name(), key.substr(1));
    EXPECT_TRUE(object->is_open());
    EXPECT_EQ(object->size(), 4000u);
    ASSERT_EQ(object->floats().size(), 1000u);
    for (size_t i = 0; i < 1000; ++i) object->floats()[i] = static_cast<float>(i) - 500.5f;

    // What a server on this host does: open the name read only, check the size, map it.
    const int fd = shm_open(key.c_str(), O_RDONLY, 0);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    struct stat st;
    ASSERT_EQ(fstat(fd, &st), 0);
    EXPECT_EQ(st.st_size, 4000);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    void* view = mmap(nullptr, 4000, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    ASSERT_NE(view, MAP_FAILED);
    const float* floats = static_cast<const float*>(view);
    for (size_t i = 0; i < 1000; ++i) ASSERT_EQ(floats[i], static_cast<float>(i) - 500.5f) << i;
    // Writes after the other side mapped it are seen too: the pages are shared.
    object->floats()[7] = 42.0f;
    EXPECT_EQ(floats[7], 42.0f);
    munmap(view, 4000);
    EXPECT_TRUE(Exists(key));
  }
  EXPECT_FALSE(Exists(key));
  EXPECT_THAT(OurObjects(), ::testing::IsEmpty());
}

TEST(SharedMemoryObjectTest, CloseIsExplicitIdempotentAndToleratesAnUnlinkedName) {
  absl::StatusOr<SharedMemoryObject> object = SharedMemoryObject::Create(64);
  ASSERT_TRUE(object.ok()) << object.status();
  const std::string key = object->key();
  ASSERT_EQ(shm_unlink(key.c_str()), 0);  // someone removed the name first
  EXPECT_TRUE(object->Close().ok());
  EXPECT_FALSE(object->is_open());
  EXPECT_EQ(object->data(), nullptr);
  EXPECT_TRUE(object->Close().ok());
}

TEST(SharedMemoryObjectTest, NamesAreUnique) {
  std::set<std::string> keys;
  for (int i = 0; i < 10000; ++i) keys.insert(MakeSharedMemoryKey());
  EXPECT_EQ(keys.size(), 10000u);
  std::vector<SharedMemoryObject> objects;
  std::set<std::string> live;
  for (int i = 0; i < 32; ++i) {
    absl::StatusOr<SharedMemoryObject> object = SharedMemoryObject::Create(4096);
    ASSERT_TRUE(object.ok()) << object.status();
    live.insert(object->key());
    objects.push_back(*std::move(object));
  }
  EXPECT_EQ(live.size(), 32u);
  EXPECT_EQ(OurObjects().size(), 32u);
  objects.clear();
  EXPECT_THAT(OurObjects(), ::testing::IsEmpty());
}

TEST(SharedMemoryObjectTest, MovingHandsTheObjectOver) {
  absl::StatusOr<SharedMemoryObject> created = SharedMemoryObject::Create(16);
  ASSERT_TRUE(created.ok()) << created.status();
  SharedMemoryObject first = *std::move(created);
  const std::string key = first.key();
  first.floats()[3] = 3.5f;
  SharedMemoryObject second = std::move(first);
  EXPECT_FALSE(first.is_open());  // NOLINT(bugprone-use-after-move): moved-from is closed
  EXPECT_TRUE(first.Close().ok());
  EXPECT_TRUE(Exists(key));
  EXPECT_EQ(second.floats()[3], 3.5f);
  absl::StatusOr<SharedMemoryObject> other = SharedMemoryObject::Create(16);
  ASSERT_TRUE(other.ok()) << other.status();
  const std::string other_key = other->key();
  second = *std::move(other);  // the object it held is removed
  EXPECT_FALSE(Exists(key));
  EXPECT_TRUE(Exists(other_key));
}

TEST(SharedMemoryObjectTest, ZeroBytesIsAnObjectWithoutAMapping) {
  absl::StatusOr<SharedMemoryObject> object = SharedMemoryObject::Create(0);
  ASSERT_TRUE(object.ok()) << object.status();
  EXPECT_TRUE(Exists(object->key()));
  EXPECT_EQ(object->data(), nullptr);
  EXPECT_TRUE(object->floats().empty());
}

TEST(SharedMemoryObjectTest, ASizeNoFileCanHaveIsInvalidArgument) {
  for (uint64_t bytes : {std::numeric_limits<uint64_t>::max(), uint64_t{1} << 63}) {
    absl::StatusOr<SharedMemoryObject> object = SharedMemoryObject::Create(bytes);
    EXPECT_EQ(object.status().code(), absl::StatusCode::kInvalidArgument) << object.status();
    EXPECT_THAT(object.status().message(), HasSubstr(absl::StrCat(bytes, " bytes")));
  }
  EXPECT_THAT(OurObjects(), ::testing::IsEmpty());
}

TEST(SharedMemoryObjectTest, MoreThanDevShmHoldsSaysHowMuchAndSuggestsShmSize) {
  struct statvfs fs;
  ASSERT_EQ(statvfs("/dev/shm", &fs), 0) << std::strerror(errno);
  const uint64_t total = uint64_t{fs.f_blocks} * fs.f_frsize;
  if (total == 0) GTEST_SKIP() << "/dev/shm has no size limit here";
  // Twice what it can hold: tmpfs refuses at once, without touching a page.
  const uint64_t bytes = 2 * total + 4096;
  absl::StatusOr<SharedMemoryObject> object = SharedMemoryObject::Create(bytes);
  ASSERT_FALSE(object.ok());
  EXPECT_EQ(object.status().code(), absl::StatusCode::kResourceExhausted) << object.status();
  EXPECT_THAT(object.status().message(), HasSubstr(absl::StrCat(bytes, " bytes")));
  EXPECT_THAT(object.status().message(), HasSubstr("/dev/shm has"));
  EXPECT_THAT(object.status().message(), HasSubstr("--shm-size"));
  EXPECT_THAT(OurObjects(), ::testing::IsEmpty());  // nothing left behind
}

}  // namespace
}  // namespace gpureduce::client
