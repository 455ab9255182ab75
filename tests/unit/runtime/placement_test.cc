// Where `auto` requests go by measured costs: the line through two timed sizes, the reader (or
// pair) expected to end first, the share that ends a pair together; the routing backend's use of
// them for messages, regions and streams of unknown length; and the self-check's measurement
// through the real CPU backend against fake GPU sessions that take a set rate.

#include "runtime/routing/placement.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/reduction/reduce_layout.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/routing/host_rates.h"
#include "runtime/routing/routing_backend.h"
#include "tests/unit/runtime/fake_routing_parts.h"

namespace gpureduce::runtime {
namespace {

using ::testing::HasSubstr;

constexpr double kUs = 1e-6;
constexpr uint64_t kMiB = uint64_t{1} << 20;

// `fixed_us` then `gbps`.
PathCost Cost(double fixed_us, double gbps) { return {fixed_us * kUs, 1e-9 / gbps}; }

TEST(PathCostTest, TheLineThroughTwoTimedSizes) {
  const PathCost cost = PathCost::Through(1000, 11 * kUs, 1001000, 1011 * kUs);
  EXPECT_NEAR(cost.fixed_seconds, 10 * kUs, 1e-12);
  EXPECT_NEAR(cost.gbps(), 1.0, 1e-9);
  EXPECT_NEAR(cost.Seconds(2001000), 2011 * kUs, 1e-12);
  const PathCost flat = PathCost::Through(1000, 50 * kUs, 1001000, 40 * kUs);
  EXPECT_NEAR(flat.seconds_per_byte, 40 * kUs / 1001000, 1e-18)
      << "the large one no slower: its average rate";
  EXPECT_NEAR(flat.fixed_seconds, 50 * kUs - 1000 * flat.seconds_per_byte, 1e-12);
  EXPECT_EQ(PathCost::Through(1000, 0, 2000, 1 * kUs).fixed_seconds, 0) << "never below 0";
}

TEST(PlaceTest, TheReaderThatEndsFirst) {
  // A message on the H200 host: the CPU's fixed cost and rate both better.
  const ReaderCosts message{Cost(3, 60), Cost(20, 9)};
  for (uint64_t bytes : {uint64_t{4}, uint64_t{4096}, 64 * kMiB, uint64_t{1} << 40}) {
    EXPECT_EQ(Place(message, bytes), Placement::kCpu) << bytes;
  }
  // The GPU reads faster but starts later: the CPU below the crossover, the GPU from it.
  const ReaderCosts faster_gpu{Cost(3, 10), Cost(50, 100)};
  EXPECT_EQ(Place(faster_gpu, 64 << 10), Placement::kCpu);
  EXPECT_EQ(Place(faster_gpu, 16 * kMiB), Placement::kGpu);
  EXPECT_EQ(Place(faster_gpu, 16 * kMiB, 1.0), Placement::kCpu) << "a share of 1: the CPU";
}

TEST(PlaceTest, BothAtOnceWhereTheSplitEndsFirst) {
  const ReaderCosts region{Cost(30, 60), Cost(100, 50)};
  EXPECT_EQ(Place(region, 1 * kMiB, 0.55), Placement::kCpu) << "the GPU's start outweighs";
  EXPECT_EQ(Place(region, 256 * kMiB, 0.55), Placement::kBoth);
  EXPECT_EQ(Place(region, 256 * kMiB, 0), Placement::kCpu) << "no share: one reader";
  const ReaderCosts slow_cpu{Cost(30, 1), Cost(100, 50)};
  EXPECT_EQ(Place(slow_cpu, 256 * kMiB, 0.5), Placement::kGpu) << "half on a slow CPU is slower";
}

TEST(PlaceTest, TheEvenShareEndsBothTogether) {
  const ReaderCosts equal{Cost(0, 50), Cost(0, 50)};
  EXPECT_DOUBLE_EQ(EvenShare(equal, kMiB), 0.5);
  const ReaderCosts region{Cost(30, 60), Cost(100, 40)};
  const uint64_t n = uint64_t{1} << 30;
  const double share = EvenShare(region, n);
  EXPECT_NEAR(region.cpu.Seconds(share * n), region.gpu.Seconds((1 - share) * n), 1e-12);
  EXPECT_GT(share, 0.6) << "the CPU faster and starting sooner";
  EXPECT_EQ(EvenShare(region, 1000), 1) << "too small for the GPU's start: the CPU alone";
}

TEST(PlaceTest, TheLogSaysWhereEachSizeGoes) {
  const std::string text = DescribePlacement({Cost(30, 60), Cost(100, 50)}, 0.55, 1u << 30);
  EXPECT_THAT(text, HasSubstr("the CPU 30.0 us + 60.0 GB/s, a GPU 100.0 us + 50.0 GB/s: the CPU"));
  EXPECT_THAT(text, HasSubstr(", the CPU and a GPU at once from "));
  EXPECT_THAT(text, HasSubstr("(up to 1GiB)"));
}

TEST_F(RoutingBackendTest, MeasuredCostsPlaceEachAutoRequestByItsLocationAndSize) {
  Make(1, {.auto_cpu_below = 1000, .measured_placement = true, .host_cpu_share = 0.5});
  EXPECT_EQ(Route(Auto(999)), "-1") << "not measured yet: the fallback threshold";
  EXPECT_EQ(Route(Auto(1000)), "0");
  backend_->set_costs({Cost(3, 10), Cost(50, 100)}, {Cost(30, 60), Cost(100, 50)});
  EXPECT_EQ(Route(Auto(1000)), "-1") << "4 KB of a message: the CPU";
  EXPECT_EQ(Route(Auto(4 * kMiB)), "0") << "16 MiB: the faster GPU";
  EXPECT_EQ(Route(Auto(0)), "0") << "unknown length: by the rates";
  EXPECT_EQ(Route(HostRegion(kMiB / 4)), "-1") << "1 MiB of a region: the CPU";
  EXPECT_EQ(Route(HostRegion(64 * kMiB)), "0,-1") << "256 MiB: both at once";
  EXPECT_EQ(cpu_->opened.back().size_hint, 32 * kMiB) << "in the share";
  RequestSpec named = Auto(1000);
  named.auto_kernel = false;
  EXPECT_EQ(Route(named), "0") << "a named GPU kernel runs where it names";
  backend_->set_costs({Cost(3, 60), Cost(20, 9)}, {Cost(30, 1), Cost(100, 50)});
  EXPECT_EQ(Route(Auto(0)), "-1") << "the CPU's rate better: a stream of unknown length too";
  EXPECT_EQ(Route(HostRegion(64 * kMiB)), "0") << "a slow CPU: the GPU alone";
}

TEST_F(RoutingBackendTest, AThresholdGivenByFlagIgnoresMeasuredCosts) {
  Make(1, {.auto_cpu_below = 1000, .host_cpu_share = 0.5});
  backend_->set_costs({Cost(3, 10), Cost(50, 100)}, {Cost(30, 1), Cost(100, 50)});
  EXPECT_EQ(Route(Auto(4 * kMiB)), "0");
  EXPECT_EQ(Route(Auto(999)), "-1");
  EXPECT_EQ(Route(HostRegion(64 * kMiB)), "0,-1") << "past the threshold: the share";
}

TEST_F(RoutingBackendTest, ArrayRequestsArePlacedAsWholeArrays) {
  Make(1, {.measured_placement = true, .gpu_arrays = true});
  backend_->set_costs({Cost(3, 10), Cost(50, 100)}, {Cost(30, 60), Cost(100, 50)});
  RequestSpec small = Auto(1000);
  small.layout =
      std::make_shared<ReduceLayout>(*ReduceLayout::ForSegments(std::vector<uint64_t>{500, 500}));
  EXPECT_EQ(Route(small), "-1");
  RequestSpec large = Auto(4 * kMiB);
  large.layout = std::make_shared<ReduceLayout>(
      *ReduceLayout::ForSegments(std::vector<uint64_t>{kMiB, 3 * kMiB}));
  EXPECT_EQ(Route(large), "0");
}

// Fake GPU sessions for the real CPU backend to be measured against: `gbps`, and
// `finish_seconds` to answer.
std::unique_ptr<FakeGpus> FakeGpusAt(double gbps, double finish_seconds = 0) {
  auto gpus = std::make_unique<FakeGpus>(1);
  gpus->gbps = gbps;
  gpus->finish_seconds = finish_seconds;
  return gpus;
}

TEST(HostRatesTest, EachReaderIsTimedOnMessagesAndRegions) {
  CpuBackend cpu(2);
  std::unique_ptr<FakeGpus> gpus = FakeGpusAt(4);
  const MeasuredSizes sizes{kMiB / 4, 16 * kMiB};
  for (const bool region : {false, true}) {
    const absl::StatusOr<ReaderCosts> costs =
        region ? MeasureRegionCosts(cpu, *gpus, sizes) : MeasureMessageCosts(cpu, *gpus, sizes);
    ASSERT_TRUE(costs.ok()) << costs.status();
    EXPECT_GT(costs->cpu.gbps(), 0.1) << region;
    EXPECT_GT(costs->gpu.gbps(), 1) << region << ": the fake's 4 GB/s, give or take a sleep";
    EXPECT_LT(costs->gpu.gbps(), 8) << region;
  }
  EXPECT_EQ(MeasureMessageCosts(cpu, *gpus, {16, 16}).status().code(),
            absl::StatusCode::kInvalidArgument);
  FakeGpus none(0);
  EXPECT_EQ(MeasureRegionCosts(cpu, none, sizes).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(HostRatesTest, TheSelfCheckMeasuresBothLocationsAndTheCpusShare) {
  // A GPU that takes 5 ms to answer: a small request is the CPU's, whatever the host's load.
  RoutingBackend backend(
      std::make_unique<CpuBackend>(2), FakeGpusAt(4, 0.005),
      {.auto_cpu_below = 1000, .measured_placement = true, .host_cpu_share = -1});
  EXPECT_EQ(backend.host_cpu_share(), 0) << "not measured yet: the GPU alone";
  ASSERT_TRUE(backend.SelfCheck().ok());
  EXPECT_GT(backend.host_cpu_share(), 0);
  EXPECT_LT(backend.host_cpu_share(), 1);
  absl::StatusOr<std::unique_ptr<ReduceSession>> small = backend.Open(Auto(10));
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ((*small)->backend(), kernels::BackendKind::kCpu) << "a fake GPU starts later";
}

TEST(HostRatesTest, WithoutRegionsOnlyMessagesAreMeasured) {
  RoutingBackend backend(std::make_unique<CpuBackend>(2), FakeGpusAt(4),
                         {.measured_placement = true, .host_regions = false, .host_cpu_share = -1});
  ASSERT_TRUE(backend.SelfCheck().ok());
  EXPECT_EQ(backend.host_cpu_share(), 0) << "nothing to share";
}

}  // namespace
}  // namespace gpureduce::runtime
