// gpureduce-attack: runs one of the attacks of attacks.h against a server, for measuring by hand
// what the attack tests check (docs/reliability.md, "Hostile clients"). Test tooling: never run
// it against a server you do not own.

#include <iostream>
#include <string>

#include "absl/strings/str_join.h"
#include "common/flags.h"
#include "tests/attack/attacks.h"

namespace gpureduce::testing {
namespace {

int Run(int argc, char** argv) {
  std::string attack;
  std::string target = "127.0.0.1:50051";
  std::string source;
  std::string method = kReduceMethod;
  int64_t connections = 4;
  int64_t streams = 30000;
  uint64_t declared = 60ull << 20;
  uint64_t sent = 2ull << 20;
  absl::Duration trickle = absl::Seconds(5);
  absl::Duration hold = absl::Seconds(15);
  FlagSet flags("gpureduce-attack", "gpureduce-attack [flags] {rapid-reset|slow-upload|hold}",
                "Runs one attack against a gpureduce server on loopback and prints what the "
                "server did about it (test tooling; see docs/reliability.md).");
  flags.AddString("target", &target, "the server (numeric HOST:PORT)", "HOST:PORT");
  flags.AddString("source", &source, "local address to connect from (e.g. 127.0.0.2)", "ADDR");
  flags.AddString("method", &method, "the gRPC method the calls name", "PATH");
  flags.AddInt64("connections", &connections, "attacking connections (threads)");
  flags.AddInt64("streams", &streams,
                 "rapid-reset: calls opened and reset per thread; slow-upload: calls per "
                 "connection");
  flags.AddByteSize("declare", &declared, "slow-upload: the message length each call declares");
  flags.AddByteSize("send", &sent, "slow-upload: bytes each call sends at once");
  flags.AddDuration("trickle-every", &trickle, "slow-upload: 4 more bytes per call this often");
  flags.AddDuration("hold", &hold, "slow-upload, hold: how long the calls or sockets are held");
  if (absl::Status parsed = flags.Parse(argc, argv); !parsed.ok()) {
    std::cerr << "gpureduce-attack: " << parsed.message() << "\n";
    return 2;
  }
  if (flags.help_requested() || flags.positional().size() != 1) {
    std::cout << flags.Help();
    return flags.help_requested() ? 0 : 2;
  }
  attack = flags.positional()[0];
  auto print = [](const ConnectionOutcomes& o) {
    std::cout << "connections " << o.connections << ", refused " << o.refused << ", goaway "
              << o.goaways << " (" << absl::StrJoin(o.goaway_reasons, "; ") << "), closed "
              << o.closed << "\n";
  };
  if (attack == "rapid-reset") {
    RapidResetOptions options;
    options.target = target;
    options.source = source;
    options.method = method;
    options.connections = static_cast<int>(connections);
    options.streams = streams;
    const RapidResetResult result = RapidReset(options);
    std::cout << "streams opened and reset " << result.streams << " in "
              << absl::FormatDuration(result.took) << "\n";
    print(result.outcomes);
  } else if (attack == "slow-upload") {
    SlowUploadOptions options;
    options.target = target;
    options.source = source;
    options.method = method;
    options.connections = static_cast<int>(connections);
    options.streams_per_connection = static_cast<int>(streams);
    options.declared_bytes = declared;
    options.sent_bytes = sent;
    options.trickle_every = trickle;
    options.hold = hold;
    const SlowUploadResult result = SlowUpload(options);
    std::cout << "calls " << result.calls << ", ended by the server "
              << result.calls_ended_by_server << ", bytes sent " << result.bytes_sent << "\n";
    print(result.outcomes);
  } else if (attack == "hold") {
    HeldSockets held(target, static_cast<int>(connections), false);
    std::cout << "holding " << held.connected() << " connections for " << absl::FormatDuration(hold)
              << "\n";
    absl::SleepFor(hold);
    std::cout << "closed by the server " << held.ClosedByServer() << "\n";
  } else {
    std::cerr << "gpureduce-attack: unknown attack " << attack << "\n";
    return 2;
  }
  return 0;
}

}  // namespace
}  // namespace gpureduce::testing

int main(int argc, char** argv) { return gpureduce::testing::Run(argc, argv); }
