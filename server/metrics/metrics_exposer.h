#pragma once

// Serves the metrics over HTTP on their own address (--metrics-listen), at /metrics, in the
// Prometheus text format, with prometheus-cpp's exposer (civetweb threads, apart from gRPC's),
// sized and timed so that connections held open cannot keep a scrape waiting (the .cc says how).

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "prometheus/collectable.h"
#include "prometheus/exposer.h"

namespace gpureduce::server {

class MetricsExposer {
 public:
  // Listens on `address` (HOST:PORT; port 0 picks a free one) and serves `collectables` (it
  // keeps them alive: prometheus-cpp holds only weak references). An address in use or
  // malformed is an error, not an exception.
  static absl::StatusOr<std::unique_ptr<MetricsExposer>> Start(
      absl::string_view address,
      const std::vector<std::shared_ptr<prometheus::Collectable>>& collectables);

  int port() const { return port_; }

 private:
  MetricsExposer(std::unique_ptr<prometheus::Exposer> exposer,
                 std::vector<std::shared_ptr<prometheus::Collectable>> collectables, int port)
      : collectables_(std::move(collectables)), exposer_(std::move(exposer)), port_(port) {}

  std::vector<std::shared_ptr<prometheus::Collectable>> collectables_;
  std::unique_ptr<prometheus::Exposer> exposer_;  // after what it serves: stops first
  int port_;
};

}  // namespace gpureduce::server
