#include "server/metrics/metrics_exposer.h"

#include <exception>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace gpureduce::server {
namespace {

// civetweb gives each connection a thread until its request is answered or the timeout passes.
// With this many threads and a 1 s timeout, connections held open idle or half-sent (what a
// client does to block a scraper) delay a scrape only once they outnumber the threads, and then
// by about a second for each round of them; Prometheus sends its request at once.
constexpr int kThreads = 128;
constexpr int kRequestTimeoutMs = 1000;

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsExposer>> MetricsExposer::Start(
    absl::string_view address,
    const std::vector<std::shared_ptr<prometheus::Collectable>>& collectables) {
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    // civetweb takes "HOST:PORT" for IPv4.
    exposer = std::make_unique<prometheus::Exposer>(std::vector<std::string>{
        "listening_ports", std::string(address), "num_threads", std::to_string(kThreads),
        "request_timeout_ms", std::to_string(kRequestTimeoutMs), "enable_keep_alive", "no"});
  } catch (const std::exception& error) {
    return absl::UnavailableError(absl::StrCat("cannot serve metrics on ", address, ": ",
                                               error.what(),
                                               " (address in use, or not HOST:PORT?)"));
  }
  for (const auto& collectable : collectables) exposer->RegisterCollectable(collectable);
  const std::vector<int> ports = exposer->GetListeningPorts();
  const int port = ports.empty() ? 0 : ports.front();
  return std::unique_ptr<MetricsExposer>(
      new MetricsExposer(std::move(exposer), collectables, port));
}

}  // namespace gpureduce::server
