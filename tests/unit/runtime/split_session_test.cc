// SplitSession over the CPU backend's sessions: a request spread over several sessions (as the
// CUDA backend spreads a large one over its GPUs, or a region of system memory over a GPU and the
// CPU) must answer exactly as one session would, for a stream's chunks dealt in turn and for a
// shared-memory object cut into ranges, even or of each part's share.

#include "runtime/split_session.h"

#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <future>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/backend_factory.h"
#include "runtime/cpu/cpu_backend.h"
#include "tests/support/classic_partial.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"

namespace gpureduce::runtime {
namespace {

using gpureduce::Op;

// Forwards to a session, noting the length of each range of a region it is given.
class Recording final : public ReduceSession {
 public:
  Recording(std::unique_ptr<ReduceSession> inner, std::vector<uint64_t>* counts)
      : inner_(std::move(inner)), counts_(counts) {}
  void ConsumePieces(PayloadPieces data, ConsumeDone done) override {
    inner_->ConsumePieces(std::move(data), std::move(done));
  }
  void ConsumeShared(const SharedSource& source, ConsumeDone done) override {
    counts_->push_back(source.count);
    inner_->ConsumeShared(source, std::move(done));
  }
  void Finish(FinishDone done) override { inner_->Finish(std::move(done)); }
  BackendTiming timing() const override { return inner_->timing(); }
  std::string device_name() const override { return inner_->device_name(); }
  void StartAt(uint64_t index) override { inner_->StartAt(index); }
  kernels::KernelId kernel() const override { return inner_->kernel(); }

 private:
  std::unique_ptr<ReduceSession> inner_;
  std::vector<uint64_t>* counts_;
};

// Forwards to a session but reports a fixed timing.
class Timed final : public ReduceSession {
 public:
  Timed(std::unique_ptr<ReduceSession> inner, BackendTiming timing)
      : inner_(std::move(inner)), timing_(timing) {}
  void ConsumePieces(PayloadPieces data, ConsumeDone done) override {
    inner_->ConsumePieces(std::move(data), std::move(done));
  }
  void ConsumeShared(const SharedSource& source, ConsumeDone done) override {
    inner_->ConsumeShared(source, std::move(done));
  }
  void Finish(FinishDone done) override { inner_->Finish(std::move(done)); }
  BackendTiming timing() const override { return timing_; }
  std::string device_name() const override { return inner_->device_name(); }
  void StartAt(uint64_t index) override { inner_->StartAt(index); }
  kernels::KernelId kernel() const override { return inner_->kernel(); }

 private:
  std::unique_ptr<ReduceSession> inner_;
  const BackendTiming timing_;
};

class SplitSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BackendOptions options;
    options.kind = BackendChoice::kCpu;
    options.worker_threads = 3;
    absl::StatusOr<std::unique_ptr<Backend>> backend = CreateBackend(options);
    ASSERT_TRUE(backend.ok()) << backend.status();
    backend_ = std::move(*backend);
  }

  // `shares`: the parts' (empty: even); `counts`: where the parts note their ranges' lengths.
  std::unique_ptr<SplitSession> Open(Op op, size_t parts, std::vector<double> shares = {},
                                     std::vector<uint64_t>* counts = nullptr) {
    std::vector<std::unique_ptr<ReduceSession>> sessions;
    for (size_t i = 0; i < parts; ++i) {
      absl::StatusOr<std::unique_ptr<ReduceSession>> session =
          backend_->Open(RequestSpec{op, backend_->default_kernel(), 0, 0});
      EXPECT_TRUE(session.ok()) << session.status();
      if (counts == nullptr) {
        sessions.push_back(std::move(*session));
      } else {
        sessions.push_back(std::make_unique<Recording>(std::move(*session), counts));
      }
    }
    return std::make_unique<SplitSession>(std::move(sessions), std::move(shares));
  }

  static absl::StatusOr<gpureduce::ReduceResult> Finish(Op op, ReduceSession& session) {
    std::promise<absl::StatusOr<gpureduce::Stats>> finished;
    session.Finish([&](absl::StatusOr<gpureduce::Stats> s) { finished.set_value(std::move(s)); });
    absl::StatusOr<gpureduce::Partial> partial =
        gpureduce::testing::ClassicPartial(op, finished.get_future().get());
    if (!partial.ok()) return partial.status();
    return gpureduce::Finalize(op, *partial);
  }

  // `data` streamed in chunks of `chunk` through a split over `parts` sessions.
  absl::StatusOr<gpureduce::ReduceResult> Stream(Op op, std::span<const float> data, size_t chunk,
                                                 size_t parts) {
    std::unique_ptr<SplitSession> session = Open(op, parts);
    for (size_t at = 0; at < data.size(); at += chunk) {
      std::promise<absl::Status> consumed;
      session->Consume(data.subspan(at, std::min(chunk, data.size() - at)),
                       [&](absl::Status status) { consumed.set_value(status); });
      if (absl::Status status = consumed.get_future().get(); !status.ok()) return status;
    }
    return Finish(op, *session);
  }

  // `data` in a memfd (after `lead` floats of padding), read in place by a split over `parts`.
  absl::StatusOr<gpureduce::ReduceResult> Shared(Op op, std::span<const float> data, size_t parts,
                                                 std::vector<double> shares = {},
                                                 std::vector<uint64_t>* counts = nullptr,
                                                 SplitSession::RangesTimed timed = nullptr) {
    const size_t lead = 3;
    const int fd = memfd_create("split_session_test", 0);
    EXPECT_GE(fd, 0);
    std::vector<float> file(lead, 7.0f);
    file.insert(file.end(), data.begin(), data.end());
    EXPECT_EQ(write(fd, file.data(), file.size() * sizeof(float)),
              static_cast<ssize_t>(file.size() * sizeof(float)));
    std::unique_ptr<SplitSession> session = Open(op, parts, std::move(shares), counts);
    if (timed) session->set_on_ranges_timed(std::move(timed));
    SharedSource source;
    source.kind = SharedSource::Kind::kHost;
    source.count = data.size();
    source.fd = fd;
    source.file_offset = lead * sizeof(float);
    std::promise<absl::Status> consumed;
    session->ConsumeShared(source, [&](absl::Status status) { consumed.set_value(status); });
    const absl::Status status = consumed.get_future().get();
    absl::StatusOr<gpureduce::ReduceResult> result = Finish(op, *session);
    close(fd);
    if (!status.ok()) return status;
    return result;
  }

  static std::string Check(Op op, std::span<const float> data,
                           const absl::StatusOr<gpureduce::ReduceResult>& got) {
    if (!got.ok()) return got.status().ToString();
    if (got->count != data.size()) return absl::StrCat("count ", got->count);
    return testing::CheckAgainstReference(op, testing::ComputeReference(op, data), got->value,
                                          got->index, 1e-9);
  }

  std::unique_ptr<Backend> backend_;
};

TEST_F(SplitSessionTest, EveryOpMatchesTheReferenceAtAwkwardSizesAndSplits) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  for (size_t n : {size_t{1}, size_t{2}, size_t{31}, size_t{1000003}}) {
    for (Op op : gpureduce::kClassicOps) {
      const std::vector<float> data =
          op == Op::kProd ? testing::NearOneData(n, seed + n) : testing::MixedSignData(n, seed + n);
      for (size_t parts : {size_t{2}, size_t{3}}) {
        const std::string what = absl::StrCat(gpureduce::OpName(op), " n=", n, " parts=", parts);
        EXPECT_EQ(Check(op, data, Stream(op, data, 65537, parts)), "") << what << " streamed";
        EXPECT_EQ(Check(op, data, Stream(op, data, 997, parts)), "") << what << " small chunks";
        EXPECT_EQ(Check(op, data, Stream(op, data, n, parts)), "") << what << " one message";
        EXPECT_EQ(Check(op, data, Shared(op, data, parts)), "") << what << " shared";
      }
    }
  }
}

TEST_F(SplitSessionTest, TiesAndNaNsAcrossPartsKeepTheFirstOccurrence) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  const size_t n = 300007;
  for (Op op : {Op::kMin, Op::kMax, Op::kArgMin, Op::kArgMax}) {
    const bool less = op == Op::kMin || op == Op::kArgMin;
    std::vector<float> data = testing::MixedSignData(n, seed);
    // The extreme three times: in the last of three shared ranges, in the second, and in a
    // late chunk that another part than the first occurrence's takes.
    const float extreme = less ? -4096.0f : 4096.0f;  // beyond MixedSignData's 2^11
    for (size_t at : {size_t{290000}, size_t{150001}, size_t{200000}}) data[at] = extreme;
    for (size_t parts : {size_t{2}, size_t{3}}) {
      const std::string what = absl::StrCat(gpureduce::OpName(op), " parts=", parts);
      EXPECT_EQ(Check(op, data, Stream(op, data, 49999, parts)), "") << what;
      EXPECT_EQ(Check(op, data, Stream(op, data, n, parts)), "") << what << " one message";
      EXPECT_EQ(Check(op, data, Shared(op, data, parts)), "") << what;
      const absl::StatusOr<gpureduce::ReduceResult> got = Shared(op, data, parts);
      ASSERT_TRUE(got.ok());
      if (op == Op::kArgMin || op == Op::kArgMax) {
        EXPECT_EQ(got->index, 150001) << what;
      }
    }
    // NaNs in two parts: the first NaN wins.
    std::vector<float> nans = data;
    nans[250000] = std::numeric_limits<float>::quiet_NaN();
    nans[100003] = std::numeric_limits<float>::quiet_NaN();
    for (size_t parts : {size_t{2}, size_t{3}}) {
      const absl::StatusOr<gpureduce::ReduceResult> streamed = Stream(op, nans, 49999, parts);
      const absl::StatusOr<gpureduce::ReduceResult> shared = Shared(op, nans, parts);
      for (const auto* got : {&streamed, &shared}) {
        ASSERT_TRUE(got->ok()) << got->status();
        EXPECT_TRUE(std::isnan((*got)->value)) << gpureduce::OpName(op);
        if (op == Op::kArgMin || op == Op::kArgMax) {
          EXPECT_EQ((*got)->index, 100003);
        }
      }
    }
  }
}

TEST_F(SplitSessionTest, UnequalSharesCutTheRegionWhereTheirFractionsEndAndAnswerAsOne) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  const size_t n = 1000003;
  const std::vector<float> data = testing::MixedSignData(n, seed);
  const std::vector<std::vector<double>> cuts = {
      {0.7, 0.3}, {0.01, 0.99}, {0.2, 0.3, 0.5}, {1e-9, 1.0}, {3.0, 1.0}};
  for (const std::vector<double>& shares : cuts) {
    double total = 0;
    for (double share : shares) total += share;
    for (Op op : {Op::kSum, Op::kArgMin, Op::kMax}) {
      const std::string what = absl::StrCat(gpureduce::OpName(op), " shares ", shares[0], "...");
      std::vector<uint64_t> counts;
      std::vector<SplitSession::RangeTime> timed;
      EXPECT_EQ(
          Check(op, data,
                Shared(op, data, shares.size(), shares, &counts,
                       [&](const std::vector<SplitSession::RangeTime>& times) { timed = times; })),
          "")
          << what;
      ASSERT_EQ(counts.size(), shares.size()) << what;
      ASSERT_EQ(timed.size(), shares.size()) << what << ": told the ranges' times once";
      for (size_t i = 0; i < shares.size(); ++i) {
        EXPECT_EQ(timed[i].bytes, counts[i] * sizeof(float)) << what;
        EXPECT_GT(timed[i].seconds, 0) << what;
      }
      uint64_t sum = 0;
      for (size_t i = 0; i < shares.size(); ++i) {
        EXPECT_NEAR(double(counts[i]), double(n) * shares[i] / total, 1.0) << what << " part " << i;
        sum += counts[i];
      }
      EXPECT_EQ(sum, n) << what;
    }
  }
}

TEST_F(SplitSessionTest, NamesEveryPartsDeviceAndTimesItsSlowest) {
  std::unique_ptr<SplitSession> session = Open(Op::kSum, 3);
  EXPECT_EQ(session->parts(), 3u);
  EXPECT_EQ(session->devices(), (std::vector<int>{0, 0, 0}));
  EXPECT_NE(session->device_name().find(" x 3"), std::string::npos) << session->device_name();
  EXPECT_EQ(session->kernel(), kernels::KernelId::kCpu);
  const std::vector<float> data = testing::MixedSignData(200000, 5);
  for (size_t at = 0; at < data.size(); at += 70000) {
    std::promise<absl::Status> consumed;
    session->Consume(
        std::span<const float>(data).subspan(at, std::min<size_t>(70000, data.size() - at)),
        [&](absl::Status status) { consumed.set_value(status); });
    ASSERT_TRUE(consumed.get_future().get().ok());
  }
  ASSERT_TRUE(Finish(Op::kSum, *session).ok());
  EXPECT_GT(session->timing().kernel.count(), 0);
  // The parts run side by side: each stage is the slowest part's, not their sum.
  std::vector<std::unique_ptr<ReduceSession>> timed;
  for (int ms : {5, 7, 6}) {
    absl::StatusOr<std::unique_ptr<ReduceSession>> part =
        backend_->Open(RequestSpec{Op::kSum, backend_->default_kernel(), 0, 0});
    ASSERT_TRUE(part.ok());
    BackendTiming timing;
    timing.queue = std::chrono::milliseconds(ms - 4);
    timing.kernel = std::chrono::milliseconds(ms);
    timed.push_back(std::make_unique<Timed>(std::move(*part), timing));
  }
  SplitSession slowest(std::move(timed));
  EXPECT_EQ(slowest.timing().kernel, std::chrono::milliseconds(7));
  EXPECT_EQ(slowest.timing().queue, std::chrono::milliseconds(3));
  EXPECT_EQ(slowest.timing().h2d.count(), 0);
}

// A host split's parts: a GPU's session and the CPU helping it (RoutingBackend's CPU, no device
// of the server's). The response lists the GPU alone; the device name, both.
TEST_F(SplitSessionTest, ACpuHelpingTheGpusIsNoDeviceOfTheResponse) {
  CpuBackend helper(2, /*server_device=*/false);
  std::vector<std::unique_ptr<ReduceSession>> parts;
  absl::StatusOr<std::unique_ptr<ReduceSession>> listed =
      backend_->Open(RequestSpec{Op::kSum, backend_->default_kernel(), 0, 0});
  absl::StatusOr<std::unique_ptr<ReduceSession>> helping =
      helper.Open(RequestSpec{Op::kSum, helper.default_kernel(), 0, 0});
  ASSERT_TRUE(listed.ok() && helping.ok());
  EXPECT_EQ((*listed)->devices(), std::vector<int>{0});
  EXPECT_EQ((*helping)->devices(), std::vector<int>{});
  parts.push_back(std::move(*listed));
  parts.push_back(std::move(*helping));
  SplitSession session(std::move(parts));
  EXPECT_EQ(session.devices(), std::vector<int>{0});
  EXPECT_NE(session.device_name().find(" + "), std::string::npos) << session.device_name();
  const std::vector<float> data = testing::MixedSignData(31, 7);
  std::promise<absl::Status> consumed;
  session.Consume(data, [&](absl::Status status) { consumed.set_value(status); });
  ASSERT_TRUE(consumed.get_future().get().ok());
  EXPECT_TRUE(Finish(Op::kSum, session).ok());
}

TEST_F(SplitSessionTest, DeviceMemoryIsRefused) {
  std::unique_ptr<SplitSession> session = Open(Op::kSum, 2);
  SharedSource source;
  source.kind = SharedSource::Kind::kDevice;
  source.count = 4;
  std::promise<absl::Status> consumed;
  session->ConsumeShared(source, [&](absl::Status status) { consumed.set_value(status); });
  EXPECT_EQ(consumed.get_future().get().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Finish(Op::kSum, *session).ok());
}

}  // namespace
}  // namespace gpureduce::runtime
