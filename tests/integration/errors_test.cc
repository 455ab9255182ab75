// The request errors of the error table in README.md ("Errors": INVALID_ARGUMENT,
// FAILED_PRECONDITION, RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED, CANCELLED) through the real server,
// each followed by a correct request: a bad request is refused precisely and disturbs nothing.

#include <memory>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "grpcpp/client_context.h"
#include "gtest/gtest.h"
#include "tests/integration/server_process.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"
#include "tests/support/wire.h"

namespace gpureduce::testing {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kUnaryLimit = 1 << 20;
constexpr uint64_t kChunkLimit = 256 << 10;

struct Outcome {
  grpc::Status status;
  v1::ReduceResponse response;
};

class ErrorsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    shared_.Start({"--max-request-bytes=1MiB", "--max-chunk-bytes=256KiB"});
  }
  static void TearDownTestSuite() { shared_.Stop(); }

  void SetUp() override {
    REQUIRE_SHARED_SERVER(shared_);
    reducer_ = shared_.get()->Connect();
  }

  // After every refusal the same server must still answer a correct request correctly.
  void TearDown() override {
    if (reducer_ == nullptr) return;  // skipped
    const std::vector<float> data = MixedSignData(4097, FreshSeed());
    auto got = reducer_->Reduce(Spec(v1::SUM), data);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(
        CheckAgainstReference(gpureduce::Op::kSum, ComputeReference(gpureduce::Op::kSum, data),
                              got->value(), -1, 1e-9),
        "");
  }

  Outcome Unary(const v1::ReduceRequest& request) {
    grpc::ClientContext context;
    Outcome out;
    out.status = reducer_->stub().Reduce(&context, request, &out.response);
    return out;
  }

  Outcome Stream(const std::vector<v1::ReduceChunk>& chunks) {
    grpc::ClientContext context;
    Outcome out;
    auto writer = reducer_->stub().ReduceStream(&context, &out.response);
    for (const v1::ReduceChunk& chunk : chunks) {
      if (!writer->Write(chunk)) break;
    }
    writer->WritesDone();
    out.status = writer->Finish();
    return out;
  }

  static v1::ReduceChunk Chunk(const std::vector<float>& data, const v1::ReduceSpec* spec) {
    v1::ReduceChunk chunk;
    if (spec != nullptr) *chunk.mutable_spec() = *spec;
    chunk.set_data(Bytes(data));
    return chunk;
  }

  static v1::ReduceRequest Request(const v1::ReduceSpec& spec, const std::vector<float>& data) {
    v1::ReduceRequest request;
    *request.mutable_spec() = spec;
    request.set_data(Bytes(data));
    return request;
  }

  static SharedServer shared_;
  std::unique_ptr<client::ReducerClient> reducer_;
};

SharedServer ErrorsTest::shared_;

void ExpectRefused(const Outcome& outcome, grpc::StatusCode code, const std::string& says) {
  EXPECT_EQ(outcome.status.error_code(), code) << outcome.status.error_message();
  EXPECT_THAT(outcome.status.error_message(), HasSubstr(says));
}

const std::vector<float> kFew = {1.5f, -2.0f, 3.25f};

TEST_F(ErrorsTest, UnknownOrMissingOpIsInvalidArgument) {
  ExpectRefused(Unary(Request(Spec(static_cast<v1::Op>(99)), kFew)),
                grpc::StatusCode::INVALID_ARGUMENT, "unknown op 99; use one of SUM, PROD");
  ExpectRefused(Unary(Request(Spec(v1::OP_UNSPECIFIED), kFew)), grpc::StatusCode::INVALID_ARGUMENT,
                "op is not set");
  v1::ReduceRequest no_spec;
  no_spec.set_data(Bytes(kFew));
  ExpectRefused(Unary(no_spec), grpc::StatusCode::INVALID_ARGUMENT, "no spec");
}

TEST_F(ErrorsTest, UnknownKernelIsInvalidArgumentAndNamesTheKernels) {
  ExpectRefused(Unary(Request(Spec(v1::SUM, "fastest"), kFew)), grpc::StatusCode::INVALID_ARGUMENT,
                "unknown kernel 'fastest'; this server runs: auto, " + TestDefaultKernel());
}

TEST_F(ErrorsTest, KernelOfAnotherBackendIsFailedPrecondition) {
  const std::string foreign = TestForeignKernel();
  if (foreign.empty()) GTEST_SKIP() << "the " << TestBackend() << " server runs every kernel";
  const std::string needs = "needs the cuda backend";
  ExpectRefused(Unary(Request(Spec(v1::SUM, foreign), kFew)), grpc::StatusCode::FAILED_PRECONDITION,
                needs);
  std::vector<v1::ReduceChunk> chunks = {Chunk(kFew, nullptr)};
  const v1::ReduceSpec spec = Spec(v1::MAX, foreign);
  *chunks[0].mutable_spec() = spec;
  ExpectRefused(Stream(chunks), grpc::StatusCode::FAILED_PRECONDITION, needs);
}

TEST_F(ErrorsTest, BlockSizeOutOfRangeIsInvalidArgument) {
  ExpectRefused(Unary(Request(Spec(v1::SUM, TestDefaultKernel(), 256), kFew)),
                grpc::StatusCode::INVALID_ARGUMENT, "takes no block size");
}

TEST_F(ErrorsTest, ByteLengthNotAMultipleOfFourIsInvalidArgument) {
  v1::ReduceRequest request = Request(Spec(v1::SUM), kFew);
  request.mutable_data()->push_back('x');
  ExpectRefused(Unary(request), grpc::StatusCode::INVALID_ARGUMENT,
                "13 bytes, which is not a multiple of 4");
  // A stream's chunk may end inside an element (the next one completes it), but not the stream.
  v1::ReduceSpec spec = Spec(v1::SUM);
  std::vector<v1::ReduceChunk> chunks = {Chunk(kFew, &spec), Chunk(kFew, nullptr)};
  chunks[1].mutable_data()->append("ab");
  ExpectRefused(Stream(chunks), grpc::StatusCode::INVALID_ARGUMENT,
                "the stream ended inside an element: its last 2 bytes are not a whole float32");
}

TEST_F(ErrorsTest, BothPayloadFieldsIsInvalidArgument) {
  v1::ReduceRequest request = Request(Spec(v1::SUM), kFew);
  request.add_values(1.0f);
  ExpectRefused(Unary(request), grpc::StatusCode::INVALID_ARGUMENT, "both payload fields are set");
}

TEST_F(ErrorsTest, StreamSpecMissingOrRepeatedIsInvalidArgument) {
  ExpectRefused(Stream({Chunk(kFew, nullptr)}), grpc::StatusCode::INVALID_ARGUMENT,
                "first chunk of a ReduceStream must carry the spec");
  ExpectRefused(Stream({}), grpc::StatusCode::INVALID_ARGUMENT, "ended before it carried a spec");
  const v1::ReduceSpec spec = Spec(v1::SUM);
  ExpectRefused(Stream({Chunk(kFew, &spec), Chunk(kFew, &spec)}),
                grpc::StatusCode::INVALID_ARGUMENT, "repeats the spec");
}

TEST_F(ErrorsTest, EmptyInputWithoutIdentityIsInvalidArgument) {
  for (v1::Op op : {v1::MIN, v1::MAX, v1::MEAN, v1::SUM_SQUARES, v1::ARGMIN, v1::ARGMAX}) {
    ExpectRefused(Unary(Request(Spec(op), {})), grpc::StatusCode::INVALID_ARGUMENT, "empty input");
    const v1::ReduceSpec spec = Spec(op);
    ExpectRefused(Stream({Chunk({}, &spec)}), grpc::StatusCode::INVALID_ARGUMENT, "empty input");
  }
  const Outcome sum = Unary(Request(Spec(v1::SUM), {}));
  ASSERT_TRUE(sum.status.ok());
  EXPECT_EQ(sum.response.value(), 0.0);
  const v1::ReduceSpec prod = Spec(v1::PROD);
  const Outcome product = Stream({Chunk({}, &prod)});
  ASSERT_TRUE(product.status.ok());
  EXPECT_EQ(product.response.value(), 1.0);
}

TEST_F(ErrorsTest, CountOtherThanExpectedCountIsInvalidArgument) {
  ExpectRefused(Unary(Request(Spec(v1::SUM, "", 0, 2), kFew)), grpc::StatusCode::INVALID_ARGUMENT,
                "more elements than expected_count=2");
  const v1::ReduceSpec spec = Spec(v1::SUM, "", 0, 5);
  ExpectRefused(Stream({Chunk(kFew, &spec), Chunk(kFew, nullptr)}),
                grpc::StatusCode::INVALID_ARGUMENT, "more elements than expected_count=5");
  ExpectRefused(Stream({Chunk(kFew, &spec)}), grpc::StatusCode::INVALID_ARGUMENT,
                "ended after 3 elements but declared expected_count=5");
  const v1::ReduceSpec exact = Spec(v1::SUM, "", 0, 6);
  const Outcome ok = Stream({Chunk(kFew, &exact), Chunk(kFew, nullptr)});
  ASSERT_TRUE(ok.status.ok()) << ok.status.error_message();
  EXPECT_EQ(ok.response.value(), 2 * (1.5 - 2.0 + 3.25));
}

TEST_F(ErrorsTest, OverTheUnaryLimitIsResourceExhaustedAndSaysToStream) {
  const std::vector<float> big((kUnaryLimit / sizeof(float)) + 1, 0.5f);
  ExpectRefused(Unary(Request(Spec(v1::SUM), big)), grpc::StatusCode::RESOURCE_EXHAUSTED,
                "ReduceStream");
  const std::vector<float> at_limit(kUnaryLimit / sizeof(float), 0.5f);
  const Outcome ok = Unary(Request(Spec(v1::SUM), at_limit));
  ASSERT_TRUE(ok.status.ok()) << ok.status.error_message();
  EXPECT_EQ(ok.response.value(), 0.5 * at_limit.size());
}

TEST_F(ErrorsTest, StreamChunkOverTheLimitIsResourceExhausted) {
  const v1::ReduceSpec spec = Spec(v1::SUM);
  const std::vector<float> big(kChunkLimit / sizeof(float) + 1, 1.0f);
  ExpectRefused(Stream({Chunk(kFew, &spec), Chunk(big, nullptr)}),
                grpc::StatusCode::RESOURCE_EXHAUSTED, "send smaller chunks");
}

TEST_F(ErrorsTest, DeadlineExceededLeavesTheServerServing) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(300));
  v1::ReduceResponse response;
  auto writer = reducer_->stub().ReduceStream(&context, &response);
  const v1::ReduceSpec spec = Spec(v1::SUM);
  bool first = true;
  for (int i = 0; i < 40; ++i) {  // a slow client: 40 chunks 20 ms apart outlive the deadline
    if (!writer->Write(Chunk(MixedSignData(1000, i), first ? &spec : nullptr))) break;
    first = false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  writer->WritesDone();
  const grpc::Status status = writer->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << status.error_message();
}

TEST_F(ErrorsTest, CancelledMidStreamLeavesTheServerServing) {
  grpc::ClientContext context;
  v1::ReduceResponse response;
  auto writer = reducer_->stub().ReduceStream(&context, &response);
  const v1::ReduceSpec spec = Spec(v1::SUM);
  ASSERT_TRUE(writer->Write(Chunk(MixedSignData(100000, 1), &spec)));
  ASSERT_TRUE(writer->Write(Chunk(MixedSignData(100000, 2), nullptr)));
  context.TryCancel();
  const grpc::Status status = writer->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED) << status.error_message();
}

}  // namespace
}  // namespace gpureduce::testing
