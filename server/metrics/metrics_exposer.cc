#include "server/metrics/metrics_exposer.h"

#include <exception>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace gpureduce::server {

absl::StatusOr<std::unique_ptr<MetricsExposer>> MetricsExposer::Start(
    absl::string_view address,
    const std::vector<std::shared_ptr<prometheus::Collectable>>& collectables) {
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    // civetweb takes "HOST:PORT" for IPv4; one thread answers scrapes, which are rare.
    exposer = std::make_unique<prometheus::Exposer>(std::string(address), 1);
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
