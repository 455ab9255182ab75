// The routing backend's decisions, over a fake CPU and fake GPUs that only record what they were
// asked to open: the CPU crossover by size, the `cpu` kernel on the CPU, a pinned GPU, the GPU
// with the fewest bytes outstanding (lost and full ones passed over), the split over every GPU,
// a region of system memory over a GPU and the CPU in their shares; and a request routed to the
// real CPU backend answers as a float64 reference does.

#include "runtime/routing/routing_backend.h"

#include <future>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/reduction/reduce_layout.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/cpu/cpu_backend.h"
#include "tests/support/classic_partial.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"
#include "tests/unit/runtime/fake_routing_parts.h"

namespace gpureduce::runtime {
namespace {

using gpureduce::Op;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST_F(RoutingBackendTest, AutoRequestsKnownToBeSmallRunOnTheCpu) {
  Make(1, {.auto_cpu_below = 1000});
  EXPECT_EQ(Route(Auto(1)), "-1");
  EXPECT_EQ(Route(Auto(999)), "-1");
  ASSERT_EQ(cpu_->opened.size(), 2u);
  EXPECT_EQ(cpu_->opened[1].kernel, KernelId::kCpu) << "the CPU runs its own kernel";
  EXPECT_EQ(cpu_->opened[1].size_hint, 999u);
  EXPECT_EQ(Route(Auto(1000)), "0") << "at the crossover: the GPU";
  EXPECT_EQ(Route(Auto(0)), "0") << "size unknown: the GPU";
  EXPECT_EQ(Route(Named(KernelId::kCub, 10)), "0") << "a named GPU kernel stays on the GPU";
  EXPECT_EQ(cpu_->opened.size(), 2u);
  EXPECT_EQ(gpus_->gpus[0].opened.back().kernel, KernelId::kCub);
}

TEST_F(RoutingBackendTest, WithoutACrossoverEveryAutoRequestRunsOnAGpu) {
  Make(1, {});
  EXPECT_EQ(Route(Auto(1)), "0");
  EXPECT_TRUE(cpu_->opened.empty());
}

TEST_F(RoutingBackendTest, TheCpuKernelRunsOnTheCpuAtAnySize) {
  Make(2, {.auto_cpu_below = 0, .split_above = 100});
  EXPECT_EQ(Route(Named(KernelId::kCpu, 0)), "-1");
  EXPECT_EQ(Route(Named(KernelId::kCpu, 1u << 30)), "-1") << "not split, not on a GPU";
  ASSERT_EQ(cpu_->opened.size(), 2u);
  EXPECT_EQ(cpu_->opened[1].op, Op::kMax);
  EXPECT_TRUE(gpus_->gpus[0].opened.empty());
  EXPECT_TRUE(gpus_->gpus[1].opened.empty());
}

TEST_F(RoutingBackendTest, APinnedRequestRunsOnItsGpuAndNeverOnTheCpu) {
  Make(3, {.auto_cpu_below = 1000, .split_above = 2000});
  RequestSpec small = Auto(10);
  small.device = 2;
  EXPECT_EQ(Route(small), "2") << "not on the CPU";
  RequestSpec large = Auto(5000);
  large.device = 1;
  EXPECT_EQ(Route(large), "1") << "not split either";
  ASSERT_EQ(gpus_->pinned.size(), 2u);
  EXPECT_EQ(gpus_->pinned[1].size_hint, 5000u);
  EXPECT_TRUE(cpu_->opened.empty());
  large.device = 7;
  EXPECT_THAT(Route(large), HasSubstr("FAILED_PRECONDITION: no such GPU"));
}

TEST_F(RoutingBackendTest, TheCpuKernelPinnedToAGpuIsRefusedAndOpensNothing) {
  Make(2, {});
  RequestSpec spec = Named(KernelId::kCpu, 10);
  spec.device = 1;
  const absl::Status status = backend_->Open(spec).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(),
              HasSubstr("kernel 'cpu' runs on the CPU, but the request pins GPU 1"));
  EXPECT_TRUE(cpu_->opened.empty());
  EXPECT_TRUE(gpus_->pinned.empty());
}

// An array request (axes or segments): with the layout set.
RequestSpec Array(RequestSpec spec) {
  spec.layout = std::make_shared<ReduceLayout>(*ReduceLayout::ForSegments(
      std::vector<uint64_t>{spec.size_hint / 2, spec.size_hint - spec.size_hint / 2}));
  return spec;
}

TEST_F(RoutingBackendTest, ArrayRequestsRunOnTheCpuUnlessGpuArraysIsOn) {
  Make(2, {.auto_cpu_below = 1000, .split_above = 100});
  EXPECT_EQ(Route(Array(Auto(5000))), "-1");
  EXPECT_EQ(cpu_->opened.back().kernel, KernelId::kCpu);
  EXPECT_THAT(Route(Array(Named(KernelId::kSinglePass, 5000))),
              HasSubstr("--gpu-arrays runs them on the GPU"));
  RequestSpec pinned = Array(Auto(5000));
  pinned.device = 1;
  EXPECT_THAT(Route(pinned), HasSubstr("runs on the CPU here, but its data is on GPU 1"));

  Make(2, {.auto_cpu_below = 1000, .split_above = 100, .gpu_arrays = true});
  EXPECT_EQ(Route(Array(Auto(999))), "-1") << "below the crossover: the CPU, as a whole array";
  EXPECT_EQ(cpu_->opened.back().kernel, KernelId::kCpu);
  const std::string gpu = Route(Array(Auto(5000)));
  EXPECT_TRUE(gpu == "0" || gpu == "1") << gpu << ": one GPU, never split (past split_above)";
  EXPECT_EQ(Route(Array(Named(KernelId::kCpu, 5000))), "-1");
  EXPECT_THAT(Route(Array(Named(KernelId::kCub, 5000))),
              HasSubstr("runs on single_pass (the GPU's array kernels) or cpu"));
  EXPECT_EQ(Route(pinned), "1");
  EXPECT_EQ(gpus_->pinned.back().device, 1);
}

TEST_F(RoutingBackendTest, TheGpuWithTheFewestBytesOutstandingTakesTheRequest) {
  Make(3, {});
  gpus_->gpus[0].load.outstanding_bytes = 500;
  gpus_->gpus[1].load.outstanding_bytes = 100;
  gpus_->gpus[2].load.outstanding_bytes = 300;
  EXPECT_EQ(Route(Auto(0)), "1");
  EXPECT_EQ(Route(Auto(0)), "1") << "whatever the rotation";
  gpus_->gpus[1].load.lost = true;
  EXPECT_EQ(Route(Auto(0)), "2") << "a lost GPU is out of rotation";
}

TEST_F(RoutingBackendTest, EqualLoadsTakeTurns) {
  Make(3, {});
  std::vector<std::string> order;
  for (int i = 0; i < 4; ++i) order.push_back(Route(Auto(0)));
  EXPECT_THAT(order, ElementsAre("0", "1", "2", "0"));
}

TEST_F(RoutingBackendTest, AFullGpuPassesTheRequestToAnotherAndAllFullIsResourceExhausted) {
  Make(3, {});
  gpus_->gpus[0].full = true;
  gpus_->gpus[2].load.lost = true;
  EXPECT_EQ(Route(Auto(0)), "1");
  gpus_->gpus[1].full = true;
  EXPECT_THAT(Route(Auto(0)), HasSubstr("RESOURCE_EXHAUSTED"));
}

TEST_F(RoutingBackendTest, EveryGpuLostIsUnavailable) {
  Make(2, {});
  gpus_->gpus[0].load.lost = gpus_->gpus[1].load.lost = true;
  const absl::Status status = backend_->Open(Auto(0)).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.message(), HasSubstr("every GPU of this server is lost"));
}

TEST_F(RoutingBackendTest, RequestsKnownToBeLargeAreSpreadOverEveryUsableGpu) {
  Make(3, {.split_above = 1000});
  EXPECT_EQ(Route(Auto(999)), "0") << "below the split: one GPU";
  EXPECT_EQ(Route(Auto(1000)), "0,1,2");
  EXPECT_EQ(gpus_->gpus[2].opened.back().size_hint, 334u) << "each part counts its share";
  EXPECT_EQ(Route(Named(KernelId::kCub, 1u << 20)), "0,1,2") << "a named GPU kernel too";
  gpus_->gpus[1].load.lost = true;
  EXPECT_EQ(Route(Auto(1000)), "0,2");
  EXPECT_EQ(gpus_->gpus[2].opened.back().size_hint, 500u);
}

TEST_F(RoutingBackendTest, ASplitThatFewerThanTwoGpusCanTakeGoesToOneWithItsWholeSize) {
  Make(2, {.split_above = 1000});
  gpus_->gpus[1].full = true;
  EXPECT_EQ(Route(Auto(4000)), "0");
  EXPECT_EQ(gpus_->gpus[0].opened.back().size_hint, 4000u);
  Make(1, {.split_above = 1000});
  EXPECT_EQ(Route(Auto(4000)), "0") << "one GPU: nothing to split";
}

TEST_F(RoutingBackendTest, AutoRequestsOfSystemMemoryAreReadByAGpuAndTheCpuInTheirShares) {
  Make(1, {.auto_cpu_below = 1000, .host_cpu_share = 0.25});
  EXPECT_EQ(Route(HostRegion(999)), "-1") << "below the crossover: the CPU alone";
  EXPECT_EQ(Route(HostRegion(4000)), "0,-1") << "the GPU's range first, then the CPU's";
  EXPECT_EQ(cpu_->opened.back().size_hint, 1000u);
  EXPECT_EQ(cpu_->opened.back().kernel, KernelId::kCpu);
  EXPECT_EQ(gpus_->gpus[0].opened.back().size_hint, 3000u) << "the GPU's load counts its share";
  EXPECT_EQ(Route(Auto(4000)), "0") << "a message: one reader";
  RequestSpec named = HostRegion(4000);
  named.auto_kernel = false;
  EXPECT_EQ(Route(named), "0") << "a named GPU kernel runs alone";
  gpus_->gpus[0].full = true;
  EXPECT_THAT(Route(HostRegion(4000)), HasSubstr("RESOURCE_EXHAUSTED")) << "busy: retry";
  gpus_->gpus[0].load.lost = true;
  EXPECT_EQ(Route(HostRegion(4000)), "-1") << "every GPU lost: the CPU reads it all";
  EXPECT_EQ(cpu_->opened.back().size_hint, 4000u);
  Make(1, {.auto_cpu_below = 1000, .host_cpu_share = 1});
  EXPECT_EQ(Route(HostRegion(4000)), "-1") << "a share of 1: the CPU alone";
  Make(1, {.auto_cpu_below = 1000});
  EXPECT_EQ(Route(HostRegion(4000)), "0") << "no share: the GPU alone";
  Make(2, {.split_above = 1000, .host_cpu_share = 0.5});
  EXPECT_EQ(Route(HostRegion(4000)), "0,1") << "large enough for every GPU: the GPUs";
}

TEST(HostRatesTest, TheShareFollowsTheTimesOfSplitRequests) {
  RoutingBackend backend(std::make_unique<FakeCpu>(), std::make_unique<FakeGpus>(1),
                         {.host_cpu_share = -1});
  const uint64_t n = uint64_t{1} << 30;
  backend.LearnHostShare({n, 1.0}, {n, 0.5});  // the CPU twice the GPU's rate: 2/3 would do
  EXPECT_DOUBLE_EQ(backend.host_cpu_share(), 1.0 / 3) << "halfway from 0";
  backend.LearnHostShare({n, 1.0}, {n, 0.5});
  EXPECT_DOUBLE_EQ(backend.host_cpu_share(), 0.5);
  backend.LearnHostShare({n, 1.0}, {1000, 0.0001});
  EXPECT_DOUBLE_EQ(backend.host_cpu_share(), 0.5) << "a range too short to time";
  backend.LearnHostShare({uint64_t{64} << 20, 0.0001}, {n, 1.0});
  EXPECT_DOUBLE_EQ(backend.host_cpu_share(), 0.5) << "a GPU range within its staging: not timed";
  for (int i = 0; i < 20; ++i) backend.LearnHostShare({n, 1.0}, {n, 1e-6});
  EXPECT_DOUBLE_EQ(backend.host_cpu_share(), 0.95) << "the GPU is never left out";
  RoutingBackend fixed(std::make_unique<FakeCpu>(), std::make_unique<FakeGpus>(1),
                       {.host_cpu_share = 0.25});
  fixed.LearnHostShare({n, 1.0}, {n, 0.5});
  EXPECT_DOUBLE_EQ(fixed.host_cpu_share(), 0.25) << "a share given by flag stays";
}

TEST_F(RoutingBackendTest, ItRunsAndListsTheGpusKernelsThenTheCpusAndChecksBoth) {
  Make(2, {});
  EXPECT_EQ(backend_->kind(), BackendKind::kCuda);
  EXPECT_EQ(backend_->default_kernel(), KernelId::kSinglePass);
  EXPECT_EQ(backend_->devices().size(), 2u) << "the GPUs are the server's devices";
  EXPECT_EQ(backend_->workers(), 8u);
  const std::vector<const kernels::KernelInfo*> kernels = backend_->Kernels();
  ASSERT_GE(kernels.size(), 3u);
  EXPECT_EQ(kernels.front()->id, KernelId::kSinglePass);
  EXPECT_EQ(kernels.back()->id, KernelId::kCpu);
  EXPECT_EQ(kernels.size(), kernels::AllKernels().size()) << "every kernel of the catalogue";
  EXPECT_TRUE(backend_->SelfCheck().ok());
  EXPECT_TRUE(gpus_->checked);
  cpu_->self_check = absl::InternalError("CPU self-check failed");
  gpus_->checked = false;
  EXPECT_EQ(backend_->SelfCheck().code(), absl::StatusCode::kInternal);
  EXPECT_FALSE(gpus_->checked) << "the CPU is checked first";
}

TEST(RoutingToTheCpuBackendTest, TheCpuKernelAnswersAsTheReferenceDoes) {
  RoutingBackend backend(std::make_unique<CpuBackend>(2), std::make_unique<FakeGpus>(1), {});
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  const std::vector<float> data = testing::MixedSignData(100003, seed);
  for (Op op : {Op::kSum, Op::kArgMin}) {
    absl::StatusOr<std::unique_ptr<ReduceSession>> session =
        backend.Open(RequestSpec{op, KernelId::kCpu, 0, 0});
    ASSERT_TRUE(session.ok()) << session.status();
    EXPECT_EQ((*session)->backend(), BackendKind::kCpu);
    std::promise<absl::Status> consumed;
    (*session)->Consume(data, [&](absl::Status status) { consumed.set_value(status); });
    ASSERT_TRUE(consumed.get_future().get().ok());
    std::promise<absl::StatusOr<gpureduce::Stats>> finished;
    (*session)->Finish([&](absl::StatusOr<gpureduce::Stats> s) { finished.set_value(s); });
    const absl::StatusOr<gpureduce::Partial> partial =
        gpureduce::testing::ClassicPartial(op, finished.get_future().get());
    ASSERT_TRUE(partial.ok()) << partial.status();
    const absl::StatusOr<gpureduce::ReduceResult> result = gpureduce::Finalize(op, *partial);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(testing::CheckAgainstReference(op, testing::ComputeReference(op, data), result->value,
                                             result->index, 1e-9),
              "");
  }
}

}  // namespace
}  // namespace gpureduce::runtime
