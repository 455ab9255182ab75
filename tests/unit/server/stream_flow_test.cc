// ReduceStream's decisions driven without a network: the events a reactor sees, in the orders
// gRPC and the backend can deliver them, and what the flow tells it to do.

#include "server/stream_flow.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

namespace gpureduce::server {
namespace {

using Step = StreamFlow::Step;

// A step as "r<buffer> c<buffer> finish(<code>)", or "wait" when it asks for nothing.
std::string Describe(const Step& step) {
  std::vector<std::string> parts;
  if (step.read >= 0) parts.push_back(absl::StrCat("r", step.read));
  if (step.compute >= 0) parts.push_back(absl::StrCat("c", step.compute));
  if (step.finish) {
    parts.push_back(absl::StrCat("finish(", absl::StatusCodeToString(step.status.code()), ")"));
  }
  return parts.empty() ? "wait" : absl::StrJoin(parts, " ");
}

// A chunk lands and the reactor starts the read the flow asks for; with the read in flight and
// no failure, starting it never finishes the call.
Step Receive(StreamFlow& flow, bool has_data = true) {
  Step step = flow.ChunkReceived(has_data);
  if (step.read >= 0) {
    const Step after = flow.ReadStarted();
    EXPECT_EQ(Describe(after), "wait") << "a read is in flight and nothing failed";
  }
  return step;
}

TEST(StreamFlowTest, ChunksAlternateBuffersWhileTheBackendComputes) {
  StreamFlow flow;
  EXPECT_EQ(flow.read_buffer(), StreamFlow::kFirstRead);
  EXPECT_EQ(Describe(Receive(flow)), "r1 c0");
  EXPECT_EQ(flow.read_buffer(), 1);
  EXPECT_EQ(Describe(flow.ComputeDone(absl::OkStatus())), "wait");  // the read of 1 is in flight
  EXPECT_EQ(Describe(Receive(flow)), "r0 c1");
  EXPECT_EQ(Describe(flow.ComputeDone(absl::OkStatus())), "wait");
  EXPECT_EQ(Describe(flow.ReadsEnded(false)), "finish(OK)");
  EXPECT_TRUE(flow.finished());
}

TEST(StreamFlowTest, AChunkThatArrivesWhileBothBuffersAreBusyWaitsAndStopsReading) {
  StreamFlow flow;
  EXPECT_EQ(Describe(Receive(flow)), "r1 c0");
  // Chunk 1 arrives while 0 is still being reduced: no third read, which is the back-pressure.
  EXPECT_EQ(Describe(flow.ChunkReceived(true)), "wait");
  // Once 0 is free, 1 goes to the backend and the next read lands in 0.
  Step step = flow.ComputeDone(absl::OkStatus());
  EXPECT_EQ(Describe(step), "r0 c1");
  EXPECT_EQ(Describe(flow.ReadStarted()), "wait");
  EXPECT_EQ(Describe(flow.ReadsEnded(false)), "wait");  // 1 is still being reduced
  EXPECT_EQ(Describe(flow.ComputeDone(absl::OkStatus())), "finish(OK)");
}

TEST(StreamFlowTest, EmptyChunksAreNotHandedToTheBackend) {
  StreamFlow flow;
  EXPECT_EQ(Describe(Receive(flow, false)), "r1");
  EXPECT_EQ(Describe(Receive(flow, true)), "r0 c1");
  EXPECT_EQ(Describe(flow.ComputeDone(absl::OkStatus())), "wait");
  EXPECT_EQ(Describe(flow.ReadsEnded(false)), "finish(OK)");
}

TEST(StreamFlowTest, AnEmptyStreamFinishesAtTheHalfClose) {
  StreamFlow flow;
  EXPECT_EQ(Describe(flow.ReadsEnded(false)), "finish(OK)");
}

TEST(StreamFlowTest, ABadChunkFinishesOnlyOnceTheBackendLetsGoOfTheOtherBuffer) {
  StreamFlow flow;
  EXPECT_EQ(Describe(Receive(flow)), "r1 c0");
  EXPECT_EQ(Describe(flow.Failed(absl::InvalidArgumentError("bad chunk"))), "wait");
  EXPECT_EQ(Describe(flow.ComputeDone(absl::OkStatus())), "finish(INVALID_ARGUMENT)");
  EXPECT_EQ(Describe(flow.Cancelled()), "wait") << "finished calls never finish again";
}

TEST(StreamFlowTest, TheFirstErrorWins) {
  StreamFlow flow;
  EXPECT_EQ(Describe(Receive(flow)), "r1 c0");
  EXPECT_EQ(Describe(flow.Failed(absl::InvalidArgumentError("first"))), "wait");
  const Step step = flow.ComputeDone(absl::InternalError("second"));
  EXPECT_EQ(Describe(step), "finish(INVALID_ARGUMENT)");
  EXPECT_EQ(step.status.message(), "first");
}

TEST(StreamFlowTest, ABackendErrorStopsTheStreamWithoutAnotherRead) {
  StreamFlow flow;
  EXPECT_EQ(Describe(Receive(flow)), "r1 c0");
  EXPECT_EQ(Describe(flow.ChunkReceived(true)), "wait");  // 1 waits for the backend
  EXPECT_EQ(Describe(flow.ComputeDone(absl::InternalError("GPU fault"))), "finish(INTERNAL)");
}

TEST(StreamFlowTest, ACancelWaitsForTheBackendAndEndsCancelled) {
  StreamFlow flow;
  EXPECT_EQ(Describe(Receive(flow)), "r1 c0");
  EXPECT_EQ(Describe(flow.Cancelled()), "wait");
  EXPECT_EQ(Describe(flow.ComputeDone(absl::OkStatus())), "finish(CANCELLED)");
}

TEST(StreamFlowTest, ACancelWhileAReadIsBeingStartedFinishesAfterItReturns) {
  StreamFlow flow;
  const Step step = flow.ChunkReceived(false);  // no compute, only a read to start
  EXPECT_EQ(Describe(step), "r1");
  // Another thread cancels before StartRead has returned: finishing now could delete the reactor
  // under the thread that is about to call StartRead.
  EXPECT_EQ(Describe(flow.Cancelled()), "wait");
  EXPECT_EQ(Describe(flow.ReadStarted()), "finish(CANCELLED)");
}

TEST(StreamFlowTest, ABrokenCallEndsCancelledNotOk) {
  StreamFlow flow;
  EXPECT_EQ(Describe(Receive(flow)), "r1 c0");
  EXPECT_EQ(Describe(flow.ComputeDone(absl::OkStatus())), "wait");
  EXPECT_EQ(Describe(flow.ReadsEnded(true)), "finish(CANCELLED)");
}

TEST(StreamFlowTest, EventsAfterTheFinishAskForNothing) {
  StreamFlow flow;
  EXPECT_EQ(Describe(Receive(flow)), "r1 c0");
  EXPECT_EQ(Describe(flow.Cancelled()), "wait");
  EXPECT_EQ(Describe(flow.ComputeDone(absl::OkStatus())), "finish(CANCELLED)");
  // The read still in flight ends, and gRPC may report the cancel again: the call finished once.
  EXPECT_EQ(Describe(flow.ReadsEnded(true)), "wait");
  EXPECT_EQ(Describe(flow.Cancelled()), "wait");
  EXPECT_EQ(Describe(flow.Failed(absl::InternalError("late"))), "wait");
  EXPECT_TRUE(flow.finished());
}

TEST(StreamFlowTest, AFailedAdmissionFinishesAtOnce) {
  StreamFlow flow;
  EXPECT_EQ(Describe(flow.Failed(absl::ResourceExhaustedError("full"))),
            "finish(RESOURCE_EXHAUSTED)");
}

}  // namespace
}  // namespace gpureduce::server
