#pragma once

// A POSIX shared-memory object for the tests of regions: created with a size (and contents),
// unlinked on destruction unless a test unlinked it first.

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <span>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace gpureduce::testing {

class ShmTestObject {
 public:
  explicit ShmTestObject(uint64_t bytes, std::span<const std::byte> contents = {}, uint64_t at = 0)
      : key_(absl::StrCat("/gpureduce-server-test-", getpid(), "-", ++count_)) {
    const int fd = shm_open(key_.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    EXPECT_GE(fd, 0) << key_;
    EXPECT_EQ(ftruncate(fd, static_cast<off_t>(bytes)), 0);
    if (!contents.empty()) {
      EXPECT_EQ(pwrite(fd, contents.data(), contents.size(), static_cast<off_t>(at)),
                static_cast<ssize_t>(contents.size()));
    }
    close(fd);
  }
  ~ShmTestObject() { shm_unlink(key_.c_str()); }
  ShmTestObject(const ShmTestObject&) = delete;
  ShmTestObject& operator=(const ShmTestObject&) = delete;

  const std::string& key() const { return key_; }

 private:
  static inline int count_ = 0;
  std::string key_;
};

}  // namespace gpureduce::testing
