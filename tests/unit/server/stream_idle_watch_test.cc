#include "server/stream_idle_watch.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace gpureduce::server {
namespace {

// A stream that records what the watch tells it; deleted when its last reference goes.
class FakeStream final : public StreamIdleWatch::Stream {
 public:
  static FakeStream* Make() { return new FakeStream(); }
  // Made, watched and waiting for a message; `deleted` is set when it is deleted.
  static FakeStream* WaitingIn(StreamIdleWatch& watch, std::atomic<bool>* deleted) {
    FakeStream* stream = Make();
    stream->deleted = deleted;
    watch.Add(stream);
    stream->WaitingForMessage();
    return stream;
  }

  std::atomic<int> told{0};
  absl::Duration told_limit;
  bool told_full = false;
  absl::Notification told_once;
  std::atomic<bool>* deleted = nullptr;

  void Release() { Unref(); }  // the owner's reference (gRPC's, for a reactor)
  void OnIdle(absl::Duration limit, int64_t since, bool full) override {
    told_limit = limit;
    told_full = full;
    still_waiting = StillWaitingSince(since);
    if (told.fetch_add(1) == 0) told_once.Notify();
  }
  bool still_waiting = false;  // what StillWaitingSince said when it was told
  void Ref() override { refs_.fetch_add(1); }
  void Unref() override {
    if (refs_.fetch_sub(1) == 1) {
      if (deleted != nullptr) deleted->store(true);
      delete this;
    }
  }

 private:
  FakeStream() = default;
  ~FakeStream() override = default;
  std::atomic<int> refs_{1};
};

TEST(StreamIdleWatchTest, AStreamWaitingLongerThanTheLimitIsToldOnce) {
  StreamIdleWatch watch(absl::Milliseconds(100));
  FakeStream* stream = FakeStream::WaitingIn(watch, nullptr);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(stream->told_once.WaitForNotificationWithTimeout(absl::Seconds(5)));
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(100));
  EXPECT_LT(waited, std::chrono::milliseconds(1000));
  EXPECT_EQ(stream->told_limit, absl::Milliseconds(100));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(stream->told.load(), 1) << "told at most once";
  watch.Remove(stream);
  stream->Release();
}

TEST(StreamIdleWatchTest, MessagesInTimeAndBusyServersAreNotIdle) {
  StreamIdleWatch watch(absl::Milliseconds(200));
  FakeStream* chatty = FakeStream::Make();
  FakeStream* busy = FakeStream::Make();
  watch.Add(chatty);
  watch.Add(busy);
  // The busy stream got its message; the server then takes long to start the next read.
  busy->WaitingForMessage();
  busy->MessageArrived();
  for (int i = 0; i < 10; ++i) {
    chatty->WaitingForMessage();
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    chatty->MessageArrived();
  }
  EXPECT_EQ(chatty->told.load(), 0);
  EXPECT_EQ(busy->told.load(), 0) << "600 ms without a read is the server's doing";
  watch.Remove(chatty);
  watch.Remove(busy);
  chatty->Release();
  busy->Release();
}

TEST(StreamIdleWatchTest, EachWaitIsToldAboutOnceAndSaysWhetherItStillWaits) {
  StreamIdleWatch watch(absl::Milliseconds(50));
  FakeStream* stream = FakeStream::WaitingIn(watch, nullptr);
  ASSERT_TRUE(stream->told_once.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_TRUE(stream->still_waiting);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_EQ(stream->told.load(), 1) << "one wait, told once";
  // A message, then a new wait that also goes quiet: told again, about the new wait.
  stream->MessageArrived();
  stream->WaitingForMessage();
  for (int i = 0; i < 500 && stream->told.load() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(stream->told.load(), 2);
  watch.Remove(stream);
  stream->Release();
}

TEST(StreamIdleWatchTest, ARemovedStreamIsNeverToldAndKeepsNoReference) {
  StreamIdleWatch watch(absl::Milliseconds(50));
  std::atomic<bool> deleted{false};
  FakeStream* stream = FakeStream::WaitingIn(watch, &deleted);
  stream->Ref();  // the test's own, so the stream outlives the owner's release
  watch.Remove(stream);
  stream->Release();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // four limits
  EXPECT_EQ(stream->told.load(), 0);
  EXPECT_FALSE(deleted.load());
  stream->Release();
  EXPECT_TRUE(deleted.load()) << "no reference is left behind";
}

TEST(StreamIdleWatchTest, AStreamReleasedWhileBeingToldLivesUntilTheWatchIsDone) {
  StreamIdleWatch watch(absl::Milliseconds(50));
  std::atomic<bool> deleted{false};
  FakeStream* stream = FakeStream::WaitingIn(watch, &deleted);
  ASSERT_TRUE(stream->told_once.WaitForNotificationWithTimeout(absl::Seconds(5)));
  // The owner lets go as soon as it was told (a reactor finishing from OnIdle); the watch's own
  // reference, if it still holds one, is the last.
  watch.Remove(stream);
  stream->Release();
  for (int i = 0; i < 100 && !deleted.load(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(deleted.load());
}

TEST(StreamIdleWatchTest, ZeroTurnsTheWatchOff) {
  StreamIdleWatch watch(absl::ZeroDuration());
  FakeStream* stream = FakeStream::WaitingIn(watch, nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(stream->told.load(), 0);
  watch.Remove(stream);
  stream->Release();
}

TEST(StreamIdleWatchTest, WhileTheServerIsFullTheShorterLimitApplies) {
  StreamIdleWatch watch(absl::Seconds(30), absl::Milliseconds(200));
  std::atomic<bool> deleted{false};
  FakeStream* stream = FakeStream::WaitingIn(watch, &deleted);
  // Not full: 30 s to go.
  EXPECT_FALSE(stream->told_once.WaitForNotificationWithTimeout(absl::Milliseconds(500)));
  const auto full = std::chrono::steady_clock::now();
  watch.ServerFull();
  ASSERT_TRUE(stream->told_once.WaitForNotificationWithTimeout(absl::Seconds(5)));
  // Waiting longer than 200 ms already: told at the next look, a quarter of the limit away.
  EXPECT_LT(std::chrono::steady_clock::now() - full, std::chrono::milliseconds(400));
  EXPECT_EQ(stream->told_limit, absl::Milliseconds(200));
  EXPECT_TRUE(stream->told_full);
  watch.Remove(stream);
  stream->Release();
}

TEST(StreamIdleWatchTest, TheShorterLimitLastsTwoOfItAfterTheLastRefusal) {
  StreamIdleWatch watch(absl::Seconds(30), absl::Milliseconds(100));
  watch.ServerFull();
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // past two of the limit
  std::atomic<bool> deleted{false};
  FakeStream* stream = FakeStream::WaitingIn(watch, &deleted);
  EXPECT_FALSE(stream->told_once.WaitForNotificationWithTimeout(absl::Milliseconds(500)));
  watch.Remove(stream);
  stream->Release();
}

}  // namespace
}  // namespace gpureduce::server
