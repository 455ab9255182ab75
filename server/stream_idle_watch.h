#pragma once

// Ends calls whose client has gone quiet. A call that sends part of a message and then nothing
// holds an admission slot and its buffers for as long as its deadline allows (often forever),
// so a handful of stalled clients could lock everyone else out. One thread for the whole server
// wakes a few times per limit and tells every call that has waited longer than the limit for its
// next message (a Reduce for its one message, a ReduceStream for its next chunk); a call the
// server is not reading from (the backend is still busy with its previous chunk) is not waiting
// on its client and is never told. While the server is full (ServerFull() within the last two
// `full_limit`s) the limit is `full_limit`, so slots held by stalled clients, from however many
// addresses, come back to the clients that send within about `full_limit` plus a tick.

#include <atomic>
#include <cstdint>
#include <thread>

#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace gpureduce::server {

class StreamIdleWatch {
 public:
  // What a watched stream implements. The watch holds a reference (Ref/Unref) while it calls
  // OnIdle, so a stream that finishes meanwhile is not deleted under it.
  class Stream {
   public:
    // A read was started: the stream now waits on its client.
    void WaitingForMessage();
    // The read completed (a message, the half-close, or a broken call).
    void MessageArrived() { waiting_since_ns_.store(0, std::memory_order_relaxed); }

   protected:
    virtual ~Stream() = default;
    // Called on the watch's thread when the stream has waited longer than `limit` for the
    // message it began waiting for at `since` (once per wait); `full`: the shorter limit of a
    // full server applied. A message may arrive between the watch's look and this call:
    // StillWaitingSince(since) tells.
    virtual void OnIdle(absl::Duration limit, int64_t since, bool full) = 0;
    virtual void Ref() = 0;
    virtual void Unref() = 0;
    bool StillWaitingSince(int64_t since) const {
      return waiting_since_ns_.load(std::memory_order_relaxed) == since;
    }

   private:
    friend class StreamIdleWatch;
    std::atomic<int64_t> waiting_since_ns_{0};  // steady clock; 0: not waiting
    int64_t told_since_ = 0;                    // the wait it was told about; under the mutex
  };

  // `limit` and `full_limit` 0 (or infinite) turn their bound off; with both off Add and Remove
  // do nothing and no thread runs. The watch looks four times per (shorter) limit, but not more
  // often than every 10 ms.
  explicit StreamIdleWatch(absl::Duration limit, absl::Duration full_limit = absl::ZeroDuration());
  ~StreamIdleWatch();
  StreamIdleWatch(const StreamIdleWatch&) = delete;
  StreamIdleWatch& operator=(const StreamIdleWatch&) = delete;

  // A call was refused because the server was full: the shorter limit applies for a while.
  void ServerFull();

  void Add(Stream* stream);
  // Once Remove returns the watch takes no new reference to `stream` (one already taken is
  // released after its OnIdle).
  void Remove(Stream* stream);

  absl::Duration limit() const { return limit_; }
  absl::Duration full_limit() const { return full_limit_; }

 private:
  void Run();

  const absl::Duration limit_;             // ZeroDuration(): none
  const absl::Duration full_limit_;        // ZeroDuration(): none
  std::atomic<int64_t> full_since_ns_{0};  // the last ServerFull(); 0: never
  // Add and Remove run on every call's thread: the watch sleeps on `stopping_`, not on a
  // condition of mu_, so their unlocks wake nobody (an absl::Mutex with a waiter on a condition
  // woke it at each, two futex calls a request).
  absl::Mutex mu_;
  absl::flat_hash_set<Stream*> streams_ ABSL_GUARDED_BY(mu_);
  absl::Notification stopping_;
  std::thread thread_;
};

}  // namespace gpureduce::server
