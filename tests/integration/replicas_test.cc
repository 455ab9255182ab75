// Scale-out through gRPC's own load balancing, for real on one machine: three servers, each in a
// network namespace of its own with its own address (veth pairs this test makes and removes),
// reached by one client through one target ("ipv4:A:P,B:P,C:P") and round robin. A reduction in
// parts is dealt over the three; one replica is killed while it holds parts, which are sent
// again to the others, and the answer is still exact. Needs root and iproute2 (`ip netns`);
// skips with the reason elsewhere.

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "client/parallel_streams.h"
#include "grpcpp/client_context.h"
#include "gtest/gtest.h"
#include "tests/integration/server_process.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"

namespace gpureduce::testing {
namespace {

constexpr int kReplicas = 3;
constexpr int kPort = 50051;

bool Shell(const std::string& command) {
  return std::system((command + " 2>/dev/null").c_str()) == 0;
}

// Namespace i (0-based) is "<prefix>i", reached at 10.231.<subnet>.2 through a veth pair whose
// host end is 10.231.<subnet>.1/30.
class Network {
 public:
  Network() : prefix_(absl::StrCat("grt", getpid() % 100000, "n")) {}
  ~Network() { TearDown(); }

  absl::Status SetUp() {
    if (geteuid() != 0) return absl::FailedPreconditionError("needs root (ip netns)");
    if (!Shell("ip netns list")) return absl::FailedPreconditionError("needs iproute2 (ip netns)");
    // What a crashed earlier run left (the caller holds the lock: no other run is going on).
    Shell(
        "for n in $(ip netns list | awk '{print $1}' | grep -E '^grt[0-9]+n[0-9]$'); do "
        "ip netns del $n; done; for l in $(ip -o link show | awk -F': ' '{print $2}' | "
        "cut -d@ -f1 | grep -E '^grt[0-9]+n[0-9]h$'); do ip link del $l; done");
    for (int i = 0; i < kReplicas; ++i) {
      const std::string ns = Namespace(i), host = absl::StrCat(prefix_, i, "h");
      const std::string inner = absl::StrCat(prefix_, i, "c"), subnet = Subnet(i);
      const bool made =
          Shell("ip netns add " + ns) &&
          Shell(absl::StrCat("ip link add ", host, " type veth peer name ", inner)) &&
          Shell(absl::StrCat("ip link set ", inner, " netns ", ns)) &&
          Shell(absl::StrCat("ip addr add ", subnet, ".1/30 dev ", host)) &&
          Shell(absl::StrCat("ip link set ", host, " up")) &&
          Shell(absl::StrCat("ip netns exec ", ns, " ip addr add ", subnet, ".2/30 dev ", inner)) &&
          Shell(absl::StrCat("ip netns exec ", ns, " ip link set ", inner, " up")) &&
          Shell(absl::StrCat("ip netns exec ", ns, " ip link set lo up"));
      made_ = i + 1;
      if (!made) {
        return absl::FailedPreconditionError(
            absl::StrCat("could not make network namespace ", ns, " (no CAP_NET_ADMIN here?)"));
      }
    }
    return absl::OkStatus();
  }

  void TearDown() {
    for (int i = 0; i < made_; ++i) {
      Shell("ip netns del " + Namespace(i));
      Shell(absl::StrCat("ip link del ", prefix_, i, "h"));
    }
    made_ = 0;
  }

  std::string Namespace(int i) const { return absl::StrCat(prefix_, i); }
  std::string Address(int i) const { return absl::StrCat(Subnet(i), ".2:", kPort); }
  std::string Target() const {
    std::vector<std::string> addresses;
    for (int i = 0; i < kReplicas; ++i) addresses.push_back(Address(i));
    return "ipv4:" + absl::StrJoin(addresses, ",");
  }

 private:
  std::string Subnet(int i) const { return absl::StrCat("10.231.", 40 + i * 4, ""); }

  std::string prefix_;
  int made_ = 0;
};

// gpureduce-server --backend=cpu in namespace `ns`, listening on `address`, logging each request
// to `log` (debug level); it dies with the test process.
class Replica {
 public:
  Replica(const std::string& ns, const std::string& address, std::string log)
      : log_(std::move(log)) {
    std::vector<std::string> args = {"ip",
                                     "netns",
                                     "exec",
                                     ns,
                                     ServerBinary(),
                                     "--backend=cpu",
                                     "--worker-threads=2",
                                     "--listen=" + address,
                                     "--log-level=debug"};
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      const int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
      }
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      execvp("ip", argv.data());
      _exit(127);
    }
  }
  ~Replica() {
    Kill();
    std::remove(log_.c_str());
  }

  // Streams this replica has answered so far (its debug log's request lines).
  int StreamsAnswered() const {
    std::ifstream file(log_);
    int streams = 0;
    for (std::string line; std::getline(file, line);) {
      streams += line.find("ReduceStream op=") != std::string::npos ? 1 : 0;
    }
    return streams;
  }

  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);  // `ip netns exec` execs the server: this is the server's pid
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  std::string log_;
  pid_t pid_ = -1;
};

class ReplicasTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // One test at a time on this machine uses the namespaces' fixed subnets.
    lock_ = open("/tmp/gpureduce-replicas-test.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    if (lock_ >= 0) flock(lock_, LOCK_EX);
    if (absl::Status ready = network_.SetUp(); !ready.ok()) GTEST_SKIP() << ready.message();
    for (int i = 0; i < kReplicas; ++i) {
      replicas_.push_back(std::make_unique<Replica>(
          network_.Namespace(i), network_.Address(i),
          absl::StrCat("/tmp/gpureduce-replica-", getpid(), "-", i, ".log")));
    }
    // Each replica answers on its own address before the test starts.
    for (int i = 0; i < kReplicas; ++i) {
      std::unique_ptr<client::ReducerClient> one =
          client::ReducerClient::Connect("ipv4:" + network_.Address(i));
      client::CallOptions options;
      options.timeout = absl::Seconds(1);
      const absl::Time give_up = absl::Now() + absl::Seconds(20);
      while (true) {
        absl::StatusOr<bool> serving = one->IsServing("", options);
        if (serving.ok() && *serving) break;
        ASSERT_LT(absl::Now(), give_up) << "replica " << i << " did not start";
        absl::SleepFor(absl::Milliseconds(50));
      }
    }
  }
  void TearDown() override {
    replicas_.clear();
    network_.TearDown();
    if (lock_ >= 0) close(lock_);  // and with it the lock
  }

  // Until every replica has answered a call through `reducer`'s round robin (the call's peer
  // names it): then all three connections are up, and the next calls are dealt over all three.
  void WaitUntilEveryReplicaAnswers(client::ReducerClient& reducer) {
    std::set<std::string> answered;
    v1::ReduceRequest request;
    request.mutable_spec()->set_op(v1::SUM);
    request.mutable_values()->Add(1.0f);
    for (int call = 0; call < 300 && answered.size() < kReplicas; ++call) {
      grpc::ClientContext context;
      context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
      v1::ReduceResponse response;
      if (reducer.stub().Reduce(&context, request, &response).ok()) answered.insert(context.peer());
      absl::SleepFor(absl::Milliseconds(10));
    }
    ASSERT_EQ(answered.size(), size_t{kReplicas}) << "not every replica answered";
  }

  // `data` in `parts` parts over one round-robin channel to all replicas; each part's values go
  // in chunks of `chunk` floats, `pause` after each, and `on_chunk` runs before each.
  absl::StatusOr<v1::ReduceResponse> InParts(client::ReducerClient& reducer, v1::Op op,
                                             const std::vector<float>& data, uint32_t parts,
                                             size_t chunk, absl::Duration pause,
                                             std::function<void()> on_chunk = nullptr) {
    return InParts(std::vector<client::ReducerClient*>(parts, &reducer), op, data, chunk, pause,
                   std::move(on_chunk));
  }

  // The same with part i on clients[i].
  absl::StatusOr<v1::ReduceResponse> InParts(const std::vector<client::ReducerClient*>& clients,
                                             v1::Op op, const std::vector<float>& data,
                                             size_t chunk, absl::Duration pause,
                                             std::function<void()> on_chunk) {
    const uint32_t parts = static_cast<uint32_t>(clients.size());
    std::vector<client::StreamPart> list;
    for (const auto& [begin, count] : client::SplitIntoParts(data.size(), parts)) {
      auto sent = std::make_shared<size_t>(0);
      list.push_back({begin, count,
                      [&data, begin = begin, count = count, sent, pause,
                       on_chunk](absl::Span<float> out) -> absl::StatusOr<size_t> {
                        if (on_chunk) on_chunk();
                        absl::SleepFor(pause);
                        const size_t n = std::min<size_t>(out.size(), count - *sent);
                        std::copy_n(data.begin() + begin + *sent, n, out.begin());
                        *sent += n;
                        return n;
                      },
                      [sent]() -> absl::Status {
                        *sent = 0;
                        return absl::OkStatus();
                      }});
    }
    v1::ReduceSpec spec;
    spec.set_op(op);
    spec.set_expected_count(data.size());
    client::StreamOptions options;
    options.chunk_elements = chunk;
    options.timeout = absl::Seconds(60);
    return client::ReduceInParts(clients, spec, std::move(list), options);
  }

  int lock_ = -1;
  Network network_;
  std::vector<std::unique_ptr<Replica>> replicas_;
};

std::string Check(v1::Op op, const std::vector<float>& data,
                  const absl::StatusOr<v1::ReduceResponse>& got) {
  if (!got.ok()) return got.status().ToString();
  if (got->count() != data.size()) return absl::StrCat("count ", got->count());
  return CheckAgainstReference(static_cast<gpureduce::Op>(op),
                               ComputeReference(static_cast<gpureduce::Op>(op), data), got->value(),
                               got->index(), 1e-9);
}

TEST_F(ReplicasTest, PartsAreDealtOverEveryReplicaAndCombineExactly) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  const std::vector<float> data = MixedSignData(3000017, seed);
  std::unique_ptr<client::ReducerClient> reducer =
      client::ReducerClient::Connect(network_.Target());
  for (v1::Op op : {v1::SUM, v1::ARGMAX, v1::MEAN, v1::MIN}) {
    absl::StatusOr<v1::ReduceResponse> got =
        InParts(*reducer, op, data, 6, 1 << 16, absl::ZeroDuration());
    EXPECT_EQ(Check(op, data, got), "") << v1::Op_Name(op);
    if (got.ok()) {
      EXPECT_EQ(got->streams(), 6u);
      EXPECT_EQ(got->stream_retries(), 0u);
    }
  }
  // Unary calls go round robin too, and every replica answers right.
  for (int i = 0; i < 9; ++i) {
    const std::vector<float> small = MixedSignData(1000 + i, seed + i);
    v1::ReduceSpec spec;
    spec.set_op(v1::SUM);
    absl::StatusOr<v1::ReduceResponse> got = reducer->Reduce(spec, small);
    EXPECT_EQ(Check(v1::SUM, small, got), "");
  }
}

TEST_F(ReplicasTest, TheCliDealsItsStreamsOverTheReplicasAndItsAnswerIsRight) {
  const std::string out = absl::StrCat("/tmp/gpureduce-replicas-cli-", getpid());
  const std::string command =
      absl::StrCat(CliBinary(), " reduce --target ", network_.Target(),
                   " --random 3000017 --seed 11 --streams 6 --verify --op argmax > ", out, " 2>&1");
  EXPECT_EQ(std::system(command.c_str()), 0);
  std::ifstream file(out);
  const std::string printed((std::istreambuf_iterator<char>(file)),
                            std::istreambuf_iterator<char>());
  EXPECT_NE(printed.find("6 streams at once"), std::string::npos) << printed;
  EXPECT_NE(printed.find(": OK"), std::string::npos) << printed;
  // Part i went to replica i % 3: two streams each.
  for (int i = 0; i < kReplicas; ++i) EXPECT_EQ(replicas_[i]->StreamsAnswered(), 2) << i;
  std::remove(out.c_str());
}

TEST_F(ReplicasTest, PartsOfAKilledReplicaAreSentToTheOthersAndTheAnswerStaysExact) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  const std::vector<float> data = MixedSignData(6000011, seed);
  std::unique_ptr<client::ReducerClient> reducer =
      client::ReducerClient::Connect(network_.Target());
  WaitUntilEveryReplicaAnswers(*reducer);
  // Six parts, two on each replica, of 64 chunks each; replica 1 is killed once 48 chunks have
  // gone out over all parts (about 8 of each part's), so both of its parts are cut short.
  std::atomic<int> chunks{0};
  absl::StatusOr<v1::ReduceResponse> got =
      InParts(*reducer, v1::SUM, data, 6, 1 << 14, absl::Milliseconds(2), [&] {
        if (chunks.fetch_add(1) == 48) replicas_[1]->Kill();
      });
  EXPECT_EQ(Check(v1::SUM, data, got), "");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->streams(), 6u);
  // Its two parts, each sent again at least once (a retry that raced the round robin's notice of
  // the dead replica is sent once more).
  EXPECT_GE(got->stream_retries(), 2u) << "the killed replica's parts were not sent again";
  EXPECT_LE(got->stream_retries(), 4u);
  // The survivors keep answering through the same target.
  const std::vector<float> after = MixedSignData(50001, seed + 1);
  v1::ReduceSpec spec;
  spec.set_op(v1::ARGMIN);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(Check(v1::ARGMIN, after, reducer->Reduce(spec, after)), "");
}

TEST_F(ReplicasTest, WithAConnectionPerPartInOrderAKilledReplicasPartsGoToTheNext) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  const std::vector<float> data = MixedSignData(6000011, seed);
  // What `gpureduce reduce --streams 6` does with a list: part i on a channel of its own to the
  // list starting at replica i % 3, in order; parts 1 and 4 are replica 1's.
  std::vector<std::unique_ptr<client::ReducerClient>> owned;
  std::vector<client::ReducerClient*> clients;
  for (const std::string& target : client::PartTargets(network_.Target(), 6)) {
    owned.push_back(client::ReducerClient::Connect(target, true, client::Balancing::kInOrder));
    clients.push_back(owned.back().get());
  }
  std::atomic<int> chunks{0};
  absl::StatusOr<v1::ReduceResponse> got =
      InParts(clients, v1::SUM, data, 1 << 14, absl::Milliseconds(2), [&] {
        if (chunks.fetch_add(1) == 48) replicas_[1]->Kill();
      });
  EXPECT_EQ(Check(v1::SUM, data, got), "");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_GE(got->stream_retries(), 2u) << "replica 1's parts were not sent again";
  EXPECT_LE(got->stream_retries(), 4u);
}

}  // namespace
}  // namespace gpureduce::testing
