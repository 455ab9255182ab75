#pragma once

// Metrics read from the backend when Prometheus scrapes, not counted per request: each device's
// staging buffers (in use, requests waiting, waits so far), load and memory, the registered
// shared-memory regions, and one info series with the version and backend.

#include <string>
#include <vector>

#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"
#include "runtime/backend.h"
#include "server/shared_memory/region_registry.h"

namespace gpureduce::server {

class UsageCollector final : public prometheus::Collectable {
 public:
  // `regions`: the server's shared-memory regions (null: none reported).
  UsageCollector(const runtime::Backend& backend, std::string version,
                 const RegionRegistry* regions = nullptr);
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const runtime::Backend& backend_;
  const std::string version_;
  const RegionRegistry* regions_;
};

}  // namespace gpureduce::server
