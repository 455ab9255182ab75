// The server with --backend=cuda: pipeline cases the shared integration suites do not cover.
// Without a GPU the server cannot start its CUDA backend and every test skips with the reason.

#include <algorithm>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpcpp/client_context.h"
#include "gtest/gtest.h"
#include "tests/integration/server_process.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"

namespace gpureduce::testing {
namespace {

using gpureduce::Op;

v1::ReduceSpec SpecFor(Op op) {
  v1::ReduceSpec spec;
  spec.set_op(static_cast<v1::Op>(op));
  return spec;
}

std::string Check(Op op, const std::vector<float>& data,
                  const absl::StatusOr<v1::ReduceResponse>& got) {
  if (!got.ok()) return got.status().ToString();
  return CheckAgainstReference(op, ComputeReference(op, data), got->value(), got->index(), 1e-9);
}

TEST(GpuServerTest, AStreamOfTenThousandChunks) {
  auto server = ServerProcess::Start({}, true, "cuda");
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  const std::vector<float> data = MixedSignData(10000 * 997, seed);
  const auto got = StreamFloats(*(*server)->Connect(), SpecFor(Op::kSum), data, 997);
  EXPECT_EQ(Check(Op::kSum, data, got), "");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->timing().chunks(), 10000u);
  EXPECT_EQ(got->backend(), "cuda");
  EXPECT_GT(got->timing().h2d_us(), 0);
  EXPECT_GT(got->timing().kernel_us(), 0);
}

TEST(GpuServerTest, SizeAwareAutoRunsSmallArraysOnTheCpuAndHonoursANamedKernel) {
  auto server = ServerProcess::Start({"--auto-cpu-below=64KiB"}, true, "cuda");
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  std::unique_ptr<client::ReducerClient> reducer = (*server)->Connect();
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  struct Case {
    size_t n;
    std::string kernel;
    bool stream;
    const char* backend;
  };
  // 64 KiB is 16384 floats: below it `auto` goes to the CPU, unary or a stream that declares
  // its count; at it and above, and whenever a kernel is named, to the GPU.
  for (const Case& c : {Case{1, "auto", false, "cpu"}, Case{1024, "auto", false, "cpu"},
                        Case{16383, "", false, "cpu"}, Case{16384, "auto", false, "cuda"},
                        Case{1000003, "auto", false, "cuda"},
                        Case{1024, "single_pass", false, "cuda"}, Case{1024, "cub", false, "cuda"},
                        Case{4097, "auto", true, "cpu"}, Case{100003, "auto", true, "cuda"}}) {
    for (Op op : {Op::kSum, Op::kArgMax}) {
      const std::vector<float> data = MixedSignData(c.n, seed + c.n);
      v1::ReduceSpec spec = SpecFor(op);
      spec.set_kernel(c.kernel);
      spec.set_expected_count(c.n);
      const absl::StatusOr<v1::ReduceResponse> got =
          c.stream ? StreamFloats(*reducer, spec, data, 4096)
                   : reducer->Reduce(spec, absl::MakeConstSpan(data));
      const std::string what =
          absl::StrCat(c.n, " floats, kernel '", c.kernel, "'", c.stream ? ", streamed" : "");
      EXPECT_EQ(Check(op, data, got), "") << what;
      ASSERT_TRUE(got.ok()) << what;
      EXPECT_EQ(got->backend(), c.backend) << what;
      const std::string expected_kernel = std::string(c.backend) == "cpu"          ? "cpu"
                                          : c.kernel == "auto" || c.kernel.empty() ? "single_pass"
                                                                                   : c.kernel;
      EXPECT_EQ(got->kernel(), expected_kernel) << what;
    }
  }
}

TEST(GpuServerTest, RequestsWaitForAStagingBufferAndAllGetRightAnswers) {
  // One 64 KiB staging buffer for eight concurrent 4 MiB streams: most of them wait.
  auto server =
      ServerProcess::Start({"--staging-buffers=1", "--staging-buffer-bytes=64KiB"}, true, "cuda");
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  std::vector<std::string> failures(8);
  std::vector<double> queue_us(8);
  std::vector<std::thread> clients;
  for (int c = 0; c < 8; ++c) {
    clients.emplace_back([&, c] {
      const Op op = gpureduce::kClassicOps[c];
      const std::vector<float> data =
          op == Op::kProd ? NearOneData(1 << 20, seed + c) : MixedSignData(1 << 20, seed + c);
      const auto got = StreamFloats(*(*server)->Connect(), SpecFor(op), data, 1 << 18);
      failures[c] = Check(op, data, got);
      if (got.ok()) queue_us[c] = got->timing().queue_us();
    });
  }
  for (std::thread& client : clients) client.join();
  for (const std::string& failure : failures) EXPECT_EQ(failure, "");
  EXPECT_GT(*std::max_element(queue_us.begin(), queue_us.end()), 0.0);
}

TEST(GpuServerTest, CancelWhileTheGpuIsBusyThenServeTheNextRequest) {
  // 16 MiB chunks, four times the default limit: each keeps the GPU busy on 64 KiB pieces.
  auto server = ServerProcess::Start(
      {"--staging-buffers=2", "--staging-buffer-bytes=64KiB", "--max-chunk-bytes=16MiB"}, true,
      "cuda");
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  auto reducer = (*server)->Connect();
  grpc::ClientContext context;
  v1::ReduceResponse response;
  auto writer = reducer->stub().ReduceStream(&context, &response);
  v1::ReduceChunk chunk;
  chunk.mutable_spec()->set_op(v1::SUM);
  const std::vector<float> block = MixedSignData(1 << 22, FreshSeed());
  chunk.set_data(std::string(reinterpret_cast<const char*>(block.data()), block.size() * 4));
  ASSERT_TRUE(writer->Write(chunk));
  chunk.clear_spec();
  ASSERT_TRUE(writer->Write(chunk));
  context.TryCancel();
  EXPECT_EQ(writer->Finish().error_code(), grpc::StatusCode::CANCELLED);

  const std::vector<float> data = MixedSignData(1000003, FreshSeed());
  EXPECT_EQ(Check(Op::kArgMax, data, StreamFloats(*reducer, SpecFor(Op::kArgMax), data, 1 << 16)),
            "");
  absl::StatusOr<bool> serving = reducer->IsServing();
  ASSERT_TRUE(serving.ok());
  EXPECT_TRUE(*serving);
}

// Every ladder variant through the server, unary and streamed: the chunks' float32 results must
// combine into the right answer. (The kernels' own bounds are checked in ladder_test; here the
// float32 accumulation gets a loose 1e-3 of the scale.)
TEST(GpuServerTest, EveryLadderVariantUnaryAndStreamed) {
  auto server = ServerProcess::Start({"--staging-buffer-bytes=1MiB"}, true, "cuda");
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  auto reducer = (*server)->Connect();
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  const std::vector<float> mixed = MixedSignData(1000003, seed);
  const std::vector<float> near_one = NearOneData(1000003, seed + 1);
  auto list = reducer->ListKernels();
  ASSERT_TRUE(list.ok()) << list.status();
  int ladder_kernels = 0;
  for (const v1::KernelInfo& kernel : list->kernels()) {
    if (kernel.lineage().empty()) continue;  // cub: tested by the shared suites
    ++ladder_kernels;
    for (int op_value : kernel.ops()) {
      const Op op = static_cast<Op>(op_value);
      const std::vector<float>& all = op == Op::kProd ? near_one : mixed;
      // A bounded cell (atomic_global PROD) runs at its stated maximum instead.
      uint64_t n = all.size();
      for (const v1::WorkBound& bound : kernel.bounds()) {
        if (bound.op() == op_value) n = std::min<uint64_t>(n, bound.max_elements());
      }
      const std::vector<float> data(all.begin(), all.begin() + n);
      v1::ReduceSpec spec;
      spec.set_op(static_cast<v1::Op>(op));
      spec.set_kernel(kernel.name());
      const Reference reference = ComputeReference(op, data);
      const auto unary = reducer->Reduce(spec, data);
      ASSERT_TRUE(unary.ok()) << kernel.name() << ": " << unary.status();
      EXPECT_EQ(unary->kernel(), kernel.name());
      EXPECT_EQ(CheckAgainstReference(op, reference, unary->value(), unary->index(), 1e-3), "")
          << kernel.name() << " " << op_value << " unary";
      const auto streamed = StreamFloats(*reducer, spec, data, 77777);
      ASSERT_TRUE(streamed.ok()) << kernel.name() << ": " << streamed.status();
      EXPECT_EQ(CheckAgainstReference(op, reference, streamed->value(), streamed->index(), 1e-3),
                "")
          << kernel.name() << " " << op_value << " streamed";
    }
    v1::ReduceSpec argmax;
    argmax.set_op(v1::ARGMAX);
    argmax.set_kernel(kernel.name());
    EXPECT_EQ(reducer->Reduce(argmax, mixed).status().code(), absl::StatusCode::kInvalidArgument);
    argmax.set_op(v1::SUM);
    argmax.set_block_size(16);
    EXPECT_EQ(reducer->Reduce(argmax, mixed).status().code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(ladder_kernels, 10);
}

}  // namespace
}  // namespace gpureduce::testing
