#include "server/metrics/usage_collector.h"

#include <functional>
#include <string>
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

UsageCollector::UsageCollector(const runtime::Backend& backend, std::string version)
    : backend_(backend), version_(std::move(version)) {}

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
