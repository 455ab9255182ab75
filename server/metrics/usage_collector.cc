#include "server/metrics/usage_collector.h"

#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"

namespace gpureduce::server {
namespace {

prometheus::MetricFamily Family(const char* name, const char* help, prometheus::MetricType type) {
  prometheus::MetricFamily family;
  family.name = name;
  family.help = help;
  family.type = type;
  return family;
}

// One family with a series per device, valued by `value`.
prometheus::MetricFamily PerDevice(
    const char* name, const char* help, prometheus::MetricType type,
    const std::vector<runtime::DeviceUsage>& usage,
    const std::function<double(const runtime::DeviceUsage&)>& value) {
  prometheus::MetricFamily family = Family(name, help, type);
  for (const runtime::DeviceUsage& device : usage) {
    prometheus::ClientMetric metric;
    metric.label.push_back({"device", absl::StrCat(device.device)});
    if (type == prometheus::MetricType::Counter) {
      metric.counter.value = value(device);
    } else {
      metric.gauge.value = value(device);
    }
    family.metric.push_back(std::move(metric));
  }
  return family;
}

}  // namespace

UsageCollector::UsageCollector(const runtime::Backend& backend, std::string version,
                               const RegionRegistry* regions)
    : backend_(backend), version_(std::move(version)), regions_(regions) {}

std::vector<prometheus::MetricFamily> UsageCollector::Collect() const {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> families;
  prometheus::MetricFamily info = Family(
      "gpureduce_server_info", "The server's version and backend (value 1)", MetricType::Gauge);
  prometheus::ClientMetric one;
  one.label = {{"backend", std::string(kernels::BackendName(backend_.kind()))},
               {"version", version_}};
  one.gauge.value = 1;
  info.metric.push_back(std::move(one));
  families.push_back(std::move(info));

  if (regions_ != nullptr && regions_->limits().enabled) {
    const std::vector<std::shared_ptr<const Region>> regions = regions_->List();
    double bytes = 0, reading = 0;
    for (const auto& region : regions) {
      bytes += double(region->info().byte_size);
      reading += double(region->requests_in_flight());
    }
    for (const auto& [name, help, value] :
         {std::tuple{"gpureduce_shared_memory_regions", "Shared-memory regions registered now",
                     double(regions.size())},
          std::tuple{"gpureduce_shared_memory_bytes",
                     "Bytes of the shared-memory regions registered now (system regions are "
                     "pinned)",
                     bytes},
          std::tuple{"gpureduce_shared_memory_requests_reading",
                     "Requests reading a registered region now", reading}}) {
      prometheus::MetricFamily family = Family(name, help, MetricType::Gauge);
      prometheus::ClientMetric metric;
      metric.gauge.value = value;
      family.metric.push_back(std::move(metric));
      families.push_back(std::move(family));
    }
  }

  const std::vector<runtime::DeviceUsage> usage = backend_.Usage();
  if (usage.empty()) return families;  // the CPU backend has no staging pool or device memory
  families.push_back(PerDevice("gpureduce_staging_buffers", "Pinned staging buffers per GPU",
                               MetricType::Gauge, usage,
                               [](const auto& d) { return double(d.staging_buffers); }));
  families.push_back(PerDevice("gpureduce_staging_buffers_in_use",
                               "Staging buffers taken by requests now", MetricType::Gauge, usage,
                               [](const auto& d) { return double(d.staging_in_use); }));
  families.push_back(PerDevice("gpureduce_staging_waiting_requests",
                               "Requests waiting for a staging buffer now", MetricType::Gauge,
                               usage, [](const auto& d) { return double(d.staging_waiting); }));
  families.push_back(PerDevice(
      "gpureduce_staging_waits_total", "Requests that had to wait for a staging buffer",
      MetricType::Counter, usage, [](const auto& d) { return double(d.staging_waits_total); }));
  families.push_back(PerDevice("gpureduce_device_requests", "Requests running on the device now",
                               MetricType::Gauge, usage,
                               [](const auto& d) { return double(d.requests); }));
  families.push_back(PerDevice(
      "gpureduce_device_outstanding_bytes",
      "Bytes the requests on the device will move (declared or expected): the server sends a "
      "new request to the device with the fewest",
      MetricType::Gauge, usage, [](const auto& d) { return double(d.outstanding_bytes); }));
  families.push_back(
      PerDevice("gpureduce_device_lost", "1 once the device failed for good (out of rotation)",
                MetricType::Gauge, usage, [](const auto& d) { return d.lost ? 1.0 : 0.0; }));
  families.push_back(
      PerDevice("gpureduce_batches_total",
                "Batches of small requests launched (--batch-small-requests); with "
                "gpureduce_batched_requests_total, the mean batch size and launches per request",
                MetricType::Counter, usage, [](const auto& d) { return double(d.batches); }));
  families.push_back(PerDevice("gpureduce_batched_requests_total",
                               "Small requests answered from a batch", MetricType::Counter, usage,
                               [](const auto& d) { return double(d.batched_requests); }));
  families.push_back(PerDevice("gpureduce_gpu_memory_used_bytes",
                               "Device memory in use, by every process (as the driver reports)",
                               MetricType::Gauge, usage,
                               [](const auto& d) { return double(d.memory_used_bytes); }));
  families.push_back(PerDevice("gpureduce_gpu_memory_total_bytes", "Device memory in all",
                               MetricType::Gauge, usage,
                               [](const auto& d) { return double(d.memory_total_bytes); }));
  return families;
}

}  // namespace gpureduce::server
