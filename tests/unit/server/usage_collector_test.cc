// UsageCollector: what a scrape reads from the backend and the region registry at that moment.

#include "server/metrics/usage_collector.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/cpu/cpu_backend.h"
#include "tests/support/stand_in_backend.h"
#include "tests/unit/server/metric_reading.h"
#include "tests/unit/server/shm_test_object.h"

namespace gpureduce::server {
namespace {

using testing::SeriesValue;

TEST(UsageCollectorTest, TheInfoSeriesNamesVersionAndBackend) {
  const testing::StandInBackend cpu(kernels::BackendKind::kCpu);
  const UsageCollector collector(cpu, "1.2.3+abc");
  EXPECT_EQ(SeriesValue(collector, "gpureduce_server_info",
                        {{"backend", "cpu"}, {"version", "1.2.3+abc"}}),
            1);
  EXPECT_EQ(collector.Collect().size(), 1u)
      << "no staging or device series on a backend without devices, no region series without "
         "a registry";
}

TEST(UsageCollectorTest, EachDeviceReportsItsOwnUsage) {
  testing::StandInBackend backend(kernels::BackendKind::kCuda);
  for (int device : {0, 1}) {
    runtime::DeviceUsage usage;
    usage.device = device;
    usage.staging_buffers = 16 + device;
    usage.staging_in_use = 3 + device;
    usage.staging_waiting = 2 + device;
    usage.staging_waits_total = 40 + device;
    usage.requests = 5 + device;
    usage.outstanding_bytes = (uint64_t{7} << 30) + device;
    usage.memory_used_bytes = (uint64_t{9} << 30) + device;
    usage.memory_total_bytes = uint64_t{80} << 30;
    usage.lost = device == 1;
    usage.batches = 100 + device;
    usage.batched_requests = 1000 + device;
    backend.usage.push_back(usage);
  }
  const UsageCollector collector(backend, "v");
  EXPECT_EQ(
      SeriesValue(collector, "gpureduce_server_info", {{"backend", "cuda"}, {"version", "v"}}), 1);
  for (int device : {0, 1}) {
    const testing::Labels labels = {{"device", absl::StrCat(device)}};
    EXPECT_EQ(SeriesValue(collector, "gpureduce_staging_buffers", labels), 16 + device);
    EXPECT_EQ(SeriesValue(collector, "gpureduce_staging_buffers_in_use", labels), 3 + device);
    EXPECT_EQ(SeriesValue(collector, "gpureduce_staging_waiting_requests", labels), 2 + device);
    EXPECT_EQ(SeriesValue(collector, "gpureduce_staging_waits_total", labels), 40 + device);
    EXPECT_EQ(SeriesValue(collector, "gpureduce_device_requests", labels), 5 + device);
    EXPECT_EQ(SeriesValue(collector, "gpureduce_device_outstanding_bytes", labels),
              double((uint64_t{7} << 30) + device));
    EXPECT_EQ(SeriesValue(collector, "gpureduce_gpu_memory_used_bytes", labels),
              double((uint64_t{9} << 30) + device));
    EXPECT_EQ(SeriesValue(collector, "gpureduce_gpu_memory_total_bytes", labels),
              double(uint64_t{80} << 30));
    EXPECT_EQ(SeriesValue(collector, "gpureduce_device_lost", labels), device == 1 ? 1 : 0);
    EXPECT_EQ(SeriesValue(collector, "gpureduce_batches_total", labels), 100 + device);
    EXPECT_EQ(SeriesValue(collector, "gpureduce_batched_requests_total", labels), 1000 + device);
  }
  // The counters are exposed as counters (their names end in _total), the rest as gauges.
  for (const prometheus::MetricFamily& family : collector.Collect()) {
    const bool counter =
        family.name.size() > 6 && family.name.compare(family.name.size() - 6, 6, "_total") == 0;
    EXPECT_EQ(family.type,
              counter ? prometheus::MetricType::Counter : prometheus::MetricType::Gauge)
        << family.name;
  }
  const std::string text = testing::ExpositionText(collector);
  EXPECT_NE(text.find("gpureduce_staging_waits_total{device=\"1\"} 41\n"), std::string::npos)
      << text;
}

TEST(UsageCollectorTest, RegisteredRegionsAreCountedWithTheirBytesAndReaders) {
  runtime::CpuBackend backend(1);
  RegionRegistry regions(RegionLimits{true, 8, 1 << 20});
  const testing::ShmTestObject object(8192);
  const UsageCollector collector(backend, "v", &regions);
  EXPECT_EQ(SeriesValue(collector, "gpureduce_shared_memory_regions"), 0);
  for (const auto& [name, bytes] : {std::pair{"a", 4096}, std::pair{"b", 1028}}) {
    RegionInfo info;
    info.name = name;
    info.key = object.key();
    info.byte_size = bytes;
    ASSERT_TRUE(
        regions.Register(name, bytes, [&] { return Region::OpenSystem(info, backend); }).ok());
  }
  absl::StatusOr<std::shared_ptr<const Region>> found = regions.Find("b");
  ASSERT_TRUE(found.ok());
  {
    const Region::Use reading(*found);
    EXPECT_EQ(SeriesValue(collector, "gpureduce_shared_memory_regions"), 2);
    EXPECT_EQ(SeriesValue(collector, "gpureduce_shared_memory_bytes"), 4096 + 1028);
    EXPECT_EQ(SeriesValue(collector, "gpureduce_shared_memory_requests_reading"), 1);
  }
  EXPECT_EQ(SeriesValue(collector, "gpureduce_shared_memory_requests_reading"), 0);
  ASSERT_TRUE(regions.Unregister("a").ok());
  EXPECT_EQ(SeriesValue(collector, "gpureduce_shared_memory_regions"), 1);
  EXPECT_EQ(SeriesValue(collector, "gpureduce_shared_memory_bytes"), 1028);

  const RegionRegistry disabled(RegionLimits{});
  const UsageCollector without(backend, "v", &disabled);
  EXPECT_EQ(SeriesValue(without, "gpureduce_shared_memory_regions"), -1)
      << "a server that takes no shared memory reports no region series";
}

}  // namespace
}  // namespace gpureduce::server
