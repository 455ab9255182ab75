#pragma once

// Metrics read from the backend when Prometheus scrapes, not counted per request: each device's
// staging buffers (in use, requests waiting, waits so far) and its memory, and one info series
// with the version and backend.

#include <string>
#include <vector>

#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"
#include "runtime/backend.h"

namespace gpureduce::server {

class UsageCollector final : public prometheus::Collectable {
 public:
  UsageCollector(const runtime::Backend& backend, std::string version);
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const runtime::Backend& backend_;
  const std::string version_;
};

}  // namespace gpureduce::server
