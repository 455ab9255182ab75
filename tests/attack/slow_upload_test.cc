// Uploads that never end and messages longer than their limit, against the real server on
// loopback (docs/reliability.md, "Hostile clients"): d837745 let 8 connections of 48 such calls
// hold 812 MB and 64 connections 6.2 GB. Now connections beyond the caps are refused, a call is
// admitted before its message is read, a connection holding more than its admitted calls may is
// sent away, and the server's peak memory stays within the bound its flags give
// (server/memory_bound.h), however the attack is made.

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/client_context.h"
#include "gtest/gtest.h"
#include "server/memory_bound.h"
#include "tests/attack/attack_expectations.h"
#include "tests/attack/attacks.h"
#include "tests/integration/server_process.h"
#include "tests/support/random_data.h"
#include "tests/support/wire.h"

namespace gpureduce::testing {
namespace {

// A server small enough that an attack reaches its limits in seconds.
constexpr uint32_t kConnections = 16, kPerClient = 8, kStreams = 8, kRequests = 8;

std::vector<std::string> SmallServerFlags() {
  return {absl::StrCat("--max-connections=", kConnections),
          absl::StrCat("--max-connections-per-client=", kPerClient),
          absl::StrCat("--max-streams-per-connection=", kStreams),
          absl::StrCat("--max-concurrent-requests=", kRequests), "--log-level=info"};
}

// What the server's flags above bound its memory to (the server logs the same at start).
server::MemoryBound SmallServerBound() {
  server::ServiceLimits limits;
  limits.max_concurrent_requests = kRequests;
  server::ConnectionLimits connections;
  connections.max_connections = kConnections;
  connections.max_connections_per_client = kPerClient;
  return server::WorstCaseMemory(limits, connections, kStreams);
}

class SlowUploadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<ServerProcess>> started =
        ServerProcess::Start(SmallServerFlags());
    SKIP_IF_BACKEND_UNAVAILABLE(started.status());
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = std::move(*started);
    rest_ = *server_->ResidentBytes();
  }

  // The server's peak memory so far, above where it was at rest, and the bound on it.
  void ExpectPeakWithinTheBound(const std::string& what) {
    const uint64_t peak = *server_->PeakResidentBytes();
    const server::MemoryBound bound = SmallServerBound();
    std::printf("%s: server VmHWM %.1f MiB, %.1f MiB above rest; the bound %.1f MiB\n",
                what.c_str(), peak / 1048576.0, (double(peak) - double(rest_)) / 1048576.0,
                bound.total() / 1048576.0);
    EXPECT_LE(peak, rest_ + kSanitizerScale * bound.total()) << what;
  }

  // A client on 127.0.0.1 is answered.
  void ExpectServed() {
    const std::vector<float> data = MixedSignData(1024, FreshSeed());
    absl::StatusOr<v1::ReduceResponse> got = server_->Connect()->Reduce(Spec(v1::SUM), data);
    EXPECT_TRUE(got.ok()) << got.status();
  }

  // Connections the server sent away for holding more than their calls may, by its log (a
  // client busy pushing bytes may see the close before it reads the GOAWAY), once there are
  // `expected` of them or a second has passed (the line follows the close).
  int SentAway(int expected) const {
    int count = 0;
    for (int wait = 0; wait < 100 && count < expected; ++wait) {
      if (wait > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      const std::string log = server_->Log();
      count = 0;
      for (size_t at = log.find("a message far longer"); at != std::string::npos;
           at = log.find("a message far longer", at + 1)) {
        ++count;
      }
    }
    return count;
  }

  SlowUploadOptions Upload(const char* source, int connections) const {
    SlowUploadOptions upload;
    upload.target = server_->target();
    upload.source = source;
    upload.connections = connections;
    upload.streams_per_connection = kStreams;
    upload.declared_bytes = 60ull << 20;
    upload.sent_bytes = 2ull << 20;
    upload.trickle_every = absl::Seconds(1);
    upload.hold = absl::Seconds(3);
    return upload;
  }

  std::unique_ptr<ServerProcess> server_;
  uint64_t rest_ = 0;
};

// The attack of the issue, shorter: calls that declare 60 MiB, send 2 MiB and then 4 bytes a
// second, from 8 connections and then from 64.
TEST_F(SlowUploadTest, EightThenSixtyFourConnectionsAreCappedAndMemoryStaysWithinTheBound) {
  const uint64_t files_at_rest = *server_->OpenFiles();
  for (int connections : {8, 64}) {
    SCOPED_TRACE(absl::StrCat(connections, " connections"));
    // The round before has closed its connections, and the server counted them out (each held
    // two descriptors): this round's address starts with none open.
    for (int wait = 0; wait < 300 && *server_->OpenFiles() > files_at_rest; ++wait) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const SlowUploadResult result = SlowUpload(Upload(kAttacker, connections));
    std::printf("%d connections: %lld calls, %lld ended by the server, %.1f MiB sent; %s\n",
                connections, static_cast<long long>(result.calls),
                static_cast<long long>(result.calls_ended_by_server), result.bytes_sent / 1048576.0,
                Describe(result.outcomes).c_str());
    // Beyond the per-address cap connections are refused; of their calls only those admitted
    // (three quarters of --max-concurrent-requests, from one address) hold anything.
    EXPECT_EQ(result.outcomes.refused, connections - std::min<int>(connections, kPerClient))
        << server_->Log();
    EXPECT_EQ(result.outcomes.closed, 0);
    EXPECT_GE(result.calls_ended_by_server, int64_t{kPerClient * kStreams - kRequests * 3 / 4});
    ExpectPeakWithinTheBound(absl::StrCat(connections, " connections"));
  }
  ExpectServed();
}

// Every slot taken, from two addresses, by calls each holding all that gRPC receives before it
// refuses a message (just under the transport limit, never completed): the admitted calls'
// term of the bound, reached.
TEST_F(SlowUploadTest, EverySlotHoldingAllItMayStaysWithinTheBound) {
  server::ServiceLimits limits;
  const uint64_t held = limits.TransportLimit() - (64 << 10);
  std::vector<SlowUploadResult> results(2);
  std::vector<std::thread> attackers;
  for (int i = 0; i < 2; ++i) {
    attackers.emplace_back([&, i] {
      SlowUploadOptions upload = Upload(i == 0 ? kAttacker : kSecondAttacker, kPerClient);
      upload.declared_bytes = held;
      upload.sent_bytes = held - 4;
      results[i] = SlowUpload(upload);
    });
  }
  for (std::thread& attacker : attackers) attacker.join();
  for (const SlowUploadResult& result : results) {
    EXPECT_EQ(result.outcomes.closed, 0);
    EXPECT_EQ(result.outcomes.goaways, 0) << Describe(result.outcomes);
  }
  const uint64_t peak = *server_->PeakResidentBytes();
  // All eight slots held their message: the attack did reach the bound's first term.
  EXPECT_GE(peak, rest_ + kRequests * held * 9 / 10);
  ExpectPeakWithinTheBound("every slot holding a message just under the transport limit");
  ExpectServed();
}

// A message declared and sent far beyond the limit: gRPC would buffer all of it before checking
// its size; its connection is sent away first.
TEST_F(SlowUploadTest, AMessageFarLongerThanItsLimitGetsItsConnectionSentAway) {
  SlowUploadOptions upload = Upload(kAttacker, 1);
  upload.method = kReduceStreamMethod;
  upload.streams_per_connection = 2;
  upload.declared_bytes = 1ull << 30;
  upload.sent_bytes = 1ull << 30;
  const SlowUploadResult result = SlowUpload(upload);
  std::printf("%.1f MiB sent; %s\n", result.bytes_sent / 1048576.0,
              Describe(result.outcomes).c_str());
  EXPECT_LT(result.bytes_sent, uint64_t{256} << 20);
  EXPECT_EQ(SentAway(1), 1) << server_->Log();
  ExpectPeakWithinTheBound("two 1 GiB messages");
  ExpectServed();
}

// The same upload to a method whose message gRPC reads before the server sees the call (a
// unary method of the standard services, or ListKernels): nothing admits it, so its connection
// may hold only the guard's slack.
TEST_F(SlowUploadTest, UploadsToAMethodGrpcReadsItselfAreBoundedToo) {
  SlowUploadOptions upload = Upload(kAttacker, kPerClient);
  upload.method = "/gpureduce.v1.Reducer/ListKernels";
  const SlowUploadResult result = SlowUpload(upload);
  std::printf("%.1f MiB sent; %s\n", result.bytes_sent / 1048576.0,
              Describe(result.outcomes).c_str());
  EXPECT_EQ(SentAway(kPerClient), static_cast<int>(kPerClient)) << server_->Log();
  ExpectPeakWithinTheBound("uploads to ListKernels");
  ExpectServed();
}

// A compressed message would be credited at its decompressed size, far more than it took on the
// wire, and so hide another call's over-long message from the guard: the server takes no
// compression, and refuses a compressed call before reading its message.
TEST_F(SlowUploadTest, ACompressedCallIsRefusedBeforeItsMessageIsRead) {
  std::unique_ptr<client::ReducerClient> reducer = server_->Connect();
  for (grpc_compression_algorithm algorithm : {GRPC_COMPRESS_GZIP, GRPC_COMPRESS_DEFLATE}) {
    grpc::ClientContext context;
    context.set_compression_algorithm(algorithm);
    v1::ReduceRequest request;
    *request.mutable_spec() = Spec(v1::SUM);
    request.set_data(Bytes(MixedSignData(1024, FreshSeed())));
    v1::ReduceResponse response;
    const grpc::Status status = reducer->stub().Reduce(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED) << status.error_message();
    EXPECT_THAT(status.error_message(), ::testing::HasSubstr("disabled"));
  }
  ExpectServed();
}

}  // namespace
}  // namespace gpureduce::testing
