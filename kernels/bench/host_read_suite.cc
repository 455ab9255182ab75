#include "kernels/bench/host_read_suite.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace gpureduce::bench {
namespace {

// An integer sum, which the compiler vectorizes (integer adds reassociate freely): bound by the
// loads, not by a chain of adds.
uint64_t ReadWords(const uint64_t* words, size_t count) {
  uint64_t sum = 0;
  for (size_t i = 0; i < count; ++i) sum += words[i];
  return sum;
}

// One run: every thread reads its slice; the seconds from the first start to the last end.
double ReadOnce(const uint64_t* words, size_t count, unsigned threads, uint64_t* check) {
  std::vector<uint64_t> sums(threads);
  std::vector<std::thread> readers;
  const auto start = std::chrono::steady_clock::now();
  for (unsigned t = 0; t < threads; ++t) {
    const size_t begin = count * t / threads, end = count * (t + 1) / threads;
    readers.emplace_back([&, t, begin, end] { sums[t] = ReadWords(words + begin, end - begin); });
  }
  for (std::thread& reader : readers) reader.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  *check = 0;
  for (uint64_t sum : sums) *check += sum;
  return seconds;
}

}  // namespace

int RunHostReadSuite(size_t bytes, unsigned threads, unsigned runs, FILE* out) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  const size_t count = bytes / sizeof(uint64_t);
  void* memory = mmap(nullptr, count * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    std::fprintf(stderr, "gpureduce-bench: host-read: cannot map %zu bytes: %s\n", bytes,
                 std::strerror(errno));
    return 1;
  }
  // Huge pages where the kernel gives them: a reader's TLB misses are not the host's bandwidth.
  madvise(memory, count * sizeof(uint64_t), MADV_HUGEPAGE);
  auto* words = static_cast<uint64_t*>(memory);
  for (size_t i = 0; i < count; ++i) words[i] = i;  // every page populated, and known
  const uint64_t expected = count % 2 == 0 ? (count / 2) * (count - 1) : count * ((count - 1) / 2);
  std::vector<double> seconds;
  bool right = true;
  for (unsigned run = 0; run <= runs; ++run) {  // run 0 warms up
    uint64_t check = 0;
    const double took = ReadOnce(words, count, threads, &check);
    right = right && check == expected;
    if (run > 0) seconds.push_back(took);
  }
  munmap(memory, count * sizeof(uint64_t));
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  std::fprintf(out,
               "# host read: %u threads read %zu MiB of populated memory: median %.1f GB/s "
               "(best %.1f, worst %.1f) over %u runs%s\n",
               threads, bytes >> 20, bytes / median / 1e9, bytes / seconds.front() / 1e9,
               bytes / seconds.back() / 1e9, runs, right ? "" : "; WRONG SUMS");
  return right ? 0 : 1;
}

}  // namespace gpureduce::bench
