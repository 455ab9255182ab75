#pragma once

// Helpers shared by the client/input tests: temp files, pipes and chunked reads compared bit
// for bit (hand-built NPY files: tests/support/npy_bytes.h).

#include <fcntl.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "client/input/float_source.h"
#include "gtest/gtest.h"
#include "tests/support/npy_bytes.h"

namespace gpureduce::client::testing {

// A path unique to the running test.
inline std::string TempPath(absl::string_view name) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string test = absl::StrCat(info->test_suite_name(), ".", info->name());
  for (char& c : test) {
    if (c == '/') c = '_';
  }
  return absl::StrCat(::testing::TempDir(), "gpureduce_input_", ::getpid(), "_", test, "_", name);
}

// Deletes `path` when the test binary exits, so runs leave nothing behind in TempDir().
inline void RemoveAtExit(const std::string& path) {
  static struct Remover {
    std::vector<std::string> paths;
    ~Remover() {
      for (const std::string& p : paths) std::remove(p.c_str());
    }
  } remover;
  remover.paths.push_back(path);
}

inline void WriteFile(const std::string& path, absl::string_view bytes) {
  RemoveAtExit(path);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

// A fresh seed per call, so every run exercises new values; tests print it on failure.
inline uint64_t FreshSeed() {
  return (uint64_t{std::random_device{}()} << 32) | std::random_device{}();
}

// Mixed-sign values of many magnitudes, with every 16th one an arbitrary bit pattern
// (subnormals, infinities, NaN payloads) to prove the bytes pass through untouched.
inline std::vector<float> RandomFloats(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-30, 30);
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i) {
    values[i] = i % 16 == 15 ? std::bit_cast<float>(static_cast<uint32_t>(rng()))
                             : std::ldexp(mantissa(rng), exponent(rng));
  }
  return values;
}

inline std::vector<uint32_t> Bits(const std::vector<float>& values) {
  std::vector<uint32_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i) bits[i] = std::bit_cast<uint32_t>(values[i]);
  return bits;
}

inline std::string FloatBytes(const std::vector<float>& values, bool big_endian = false) {
  std::string bytes(values.size() * 4, '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    const uint32_t bits = std::bit_cast<uint32_t>(values[i]);
    for (int b = 0; b < 4; ++b) {
      bytes[i * 4 + static_cast<size_t>(big_endian ? 3 - b : b)] =
          static_cast<char>((bits >> (8 * b)) & 0xff);
    }
  }
  return bytes;
}

// Reads everything in chunks of `chunk`, checking the Read() contract on the way.
inline absl::StatusOr<std::vector<float>> ReadAll(FloatSource& source, size_t chunk) {
  std::vector<float> all;
  std::vector<float> buffer(chunk);
  while (true) {
    absl::StatusOr<size_t> got = source.Read(absl::MakeSpan(buffer));
    if (!got.ok()) return got.status();
    EXPECT_LE(*got, chunk);
    if (*got == 0) break;
    all.insert(all.end(), buffer.begin(), buffer.begin() + static_cast<ptrdiff_t>(*got));
  }
  // The end stays the end.
  absl::StatusOr<size_t> again = source.Read(absl::MakeSpan(buffer));
  EXPECT_TRUE(again.ok() && *again == 0);
  return all;
}

// Feeds `data` through a pipe from a background thread; read_fd() is the other end, which the
// caller must close (e.g. by handing it to a ByteReader that owns it) before this is destroyed.
class PipeFeeder {
 public:
  explicit PipeFeeder(std::string data) {
    std::signal(SIGPIPE, SIG_IGN);  // A reader that stops early must not kill the test.
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    read_fd_ = fds[0];
    writer_ = std::thread([fd = fds[1], data = std::move(data)] {
      for (size_t done = 0; done < data.size();) {
        const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n <= 0) break;
        done += static_cast<size_t>(n);
      }
      ::close(fd);
    });
  }
  PipeFeeder(const PipeFeeder&) = delete;
  PipeFeeder& operator=(const PipeFeeder&) = delete;
  ~PipeFeeder() { writer_.join(); }

  int read_fd() const { return read_fd_; }

 private:
  int read_fd_ = -1;
  std::thread writer_;
};

}  // namespace gpureduce::client::testing
