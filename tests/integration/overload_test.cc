// Four times more load than the server admits, through gpureduce-load: admitted requests keep a
// bounded latency and right answers, the rest are refused fast with RESOURCE_EXHAUSTED, server
// memory stays within the bound docs/reliability.md states, and the server serves normally the
// moment the load stops.

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "client/load/load_runner.h"
#include "client/load/workload.h"
#include "gtest/gtest.h"
#include "tests/integration/server_process.h"

namespace gpureduce::testing {
namespace {

constexpr uint32_t kAdmitted = 8;  // --max-concurrent-requests
constexpr uint32_t kConnections = 4;
// Streams: a refused one is refused before any of its messages is read, and an admitted one
// holds its slot while it sends, so admission (not receiving) is what the load runs into.
constexpr uint64_t kStreamBytes = uint64_t{4} << 20;
constexpr uint64_t kChunkBytes = uint64_t{256} << 10;  // --max-chunk-bytes, and each chunk
#if defined(GPUREDUCE_SANITIZED)
// Under ASan the refusals leave the admitted streams about 3 completions a second on 2 cores, so
// 3 s saw little more than the first eight finish (p50 0.5-0.9 s; over 6 s 1.0-1.6 s): a longer
// window, so that the percentiles are not only of the streams quick enough to end inside it.
constexpr absl::Duration kOverloadWindow = absl::Seconds(6);
#else
constexpr absl::Duration kOverloadWindow = absl::Seconds(3);
#endif

client::WorkloadOptions Streams() {
  client::WorkloadOptions work;
  work.stream_bytes = kStreamBytes;
  work.chunk_bytes = kChunkBytes;
  return work;
}

client::LoadResult Load(const std::string& target, uint32_t concurrency, absl::Duration duration,
                        const client::WorkloadOptions& work = Streams()) {
  absl::StatusOr<client::Workload> workload = client::Workload::Make(work);
  EXPECT_TRUE(workload.ok()) << workload.status();
  client::LoadOptions load;
  load.target = target;
  load.connections = kConnections;
  load.concurrency = concurrency;
  load.warmup = absl::Milliseconds(200);
  load.duration = duration;
  load.timeout = absl::Seconds(20);
  absl::StatusOr<client::LoadResult> result = client::RunLoad(load, *workload);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : client::LoadResult();
}

std::string Summary(const client::LoadResult& r) {
  return absl::StrCat(r.ok, " ok (p50 ", r.ok_latency.ValueAtPercentile(50) / 1e6, " ms, p99 ",
                      r.ok_latency.ValueAtPercentile(99) / 1e6, " ms), ", r.failed,
                      " refused (p50 ", r.error_latency.ValueAtPercentile(50) / 1e6, " ms, p99 ",
                      r.error_latency.ValueAtPercentile(99) / 1e6, " ms)");
}

TEST(OverloadTest, FourTimesTheAdmittedLoadIsRefusedFastAndTheRestServed) {
  // One client here (loopback), so the per-client limit is the global one.
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::Start({absl::StrCat("--max-concurrent-requests=", kAdmitted),
                            absl::StrCat("--max-requests-per-client=", kAdmitted),
                            absl::StrCat("--max-chunk-bytes=", kChunkBytes)});
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string& target = (*server)->target();

  const client::LoadResult normal = Load(target, kAdmitted, absl::Seconds(1));
  ASSERT_EQ(normal.failed + normal.wrong, 0u) << normal.first_error << normal.first_wrong;
  const uint64_t peak_before = *(*server)->PeakResidentBytes();

  const client::LoadResult overload = Load(target, 4 * kAdmitted, kOverloadWindow);
  const uint64_t peak_after = *(*server)->PeakResidentBytes();
  std::printf("at concurrency %u: %s\nat concurrency %u: %s\nserver VmHWM %.1f -> %.1f MiB\n",
              kAdmitted, Summary(normal).c_str(), 4 * kAdmitted, Summary(overload).c_str(),
              peak_before / 1048576.0, peak_after / 1048576.0);
  EXPECT_EQ(overload.wrong, 0u) << overload.first_wrong;
  EXPECT_GT(overload.ok, 0u);
  EXPECT_GT(overload.failed, 0u) << "four times the admitted concurrency must be refused in part";
  EXPECT_EQ(overload.codes.size(), overload.failed > 0 ? 2u : 1u);
  EXPECT_EQ(overload.codes.count("RESOURCE_EXHAUSTED"), 1u) << "refusals are RESOURCE_EXHAUSTED";
  // Admitted requests wait for at most the admitted ones ahead of them; refusals wait for none.
  // The storm of refusals takes its share of the cores, so the admitted p99 is bounded by the
  // same run's normal one: 4-5x it in the release build (0.24-0.26 s), 4-8x under ASan on 2
  // cores (1.8-2.9 s, where a fixed 2 s failed 2 runs in 5). 2 s stays the floor.
  const uint64_t admitted_bound =
      std::max<uint64_t>(2'000'000'000u, 12 * normal.ok_latency.ValueAtPercentile(99));
  EXPECT_LT(overload.ok_latency.ValueAtPercentile(99), admitted_bound)
      << Summary(overload) << "; normal: " << Summary(normal);
  EXPECT_LT(overload.error_latency.ValueAtPercentile(50), 100'000'000u) << Summary(overload);
#if !defined(GPUREDUCE_SANITIZED)  // ASan's quarantine keeps freed messages resident
  // docs/reliability.md: an admitted stream holds two messages, and gRPC reads about one more
  // ahead; a refused one is refused before its messages are read.
  const uint64_t bound = 3 * kAdmitted * kChunkBytes + (uint64_t{16} << 20);
  EXPECT_LT(peak_after - peak_before, bound)
      << "server VmHWM grew by " << (peak_after - peak_before) / 1048576.0 << " MiB";
#endif

  // The moment the load stops, the server serves as before.
  const client::LoadResult after = Load(target, kAdmitted, absl::Seconds(1));
  EXPECT_EQ(after.failed + after.wrong, 0u) << after.first_error << after.first_wrong;
  // Generous: two 1-second windows on a shared 2-core machine; the overload's own p50 is several
  // times the normal one, which this still tells apart.
  EXPECT_LT(after.ok_latency.ValueAtPercentile(50),
            3 * normal.ok_latency.ValueAtPercentile(50) + 20'000'000)
      << "before: " << Summary(normal) << "; after: " << Summary(after);
}

TEST(OverloadTest, UnaryRequestsArrivingAtOnceAreBoundedPerConnection) {
  // gRPC reads a unary request whole before the service can refuse it: without a bound on the
  // calls a connection may have open, 128 requests in flight would all be in server memory.
  constexpr uint64_t kRequestBytes = uint64_t{1} << 20;
  // The full server's short idle timeout (1 s) would end uploads that a loaded, sanitized 2-core
  // run makes slower than that (CANCELLED): not what this test is about, so it is the normal one.
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::Start({absl::StrCat("--max-concurrent-requests=", kAdmitted),
                            absl::StrCat("--max-requests-per-client=", kAdmitted),
                            absl::StrCat("--max-request-bytes=", kRequestBytes),
                            absl::StrCat("--max-streams-per-connection=", kAdmitted),
                            "--stream-idle-timeout-when-full=0"});
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  client::WorkloadOptions unary;
  unary.floats = kRequestBytes / sizeof(float);
  unary.payloads = 4;
  const uint64_t peak_before = *(*server)->PeakResidentBytes();
  const client::LoadResult overload =
      Load((*server)->target(), 16 * kAdmitted, absl::Seconds(2), unary);
  const uint64_t peak_after = *(*server)->PeakResidentBytes();
  std::printf("unary at concurrency %u: %s\nserver VmHWM %.1f -> %.1f MiB\n", 16 * kAdmitted,
              Summary(overload).c_str(), peak_before / 1048576.0, peak_after / 1048576.0);
  EXPECT_EQ(overload.wrong, 0u) << overload.first_wrong;
  EXPECT_GT(overload.ok, 0u);
  for (const auto& [code, count] : overload.codes) {
    EXPECT_TRUE(code == "OK" || code == "RESOURCE_EXHAUSTED") << code << ": " << count;
  }
#if !defined(GPUREDUCE_SANITIZED)
  // docs/reliability.md: up to three times its payload per call in the server (the bytes as
  // received, the parsed message, what malloc keeps), for the admitted calls and for the
  // --max-streams-per-connection (here kAdmitted) calls arriving on each connection, plus 32
  // MiB for gRPC's threads and buffers. Measured: 87-115 MiB; without the per-connection bound
  // the same load took 230 MiB.
  const uint64_t bound =
      3 * (kAdmitted + kConnections * kAdmitted) * kRequestBytes + (uint64_t{32} << 20);
  EXPECT_LT(peak_after - peak_before, bound)
      << "server VmHWM grew by " << (peak_after - peak_before) / 1048576.0 << " MiB";
#endif
}

}  // namespace
}  // namespace gpureduce::testing
