#pragma once

// Ends streams whose client has gone quiet. A stream that sends a chunk and then nothing holds
// an admission slot and its buffers for as long as its deadline allows (often forever), so a
// handful of stalled clients could lock everyone else out. One thread for the whole server wakes
// a few times per limit and tells every stream that has waited longer than the limit for its
// next message; a stream the server is not reading from (the backend is still busy with its
// previous chunk) is not waiting on its client and is never told.

#include <atomic>
#include <cstdint>
#include <thread>

#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
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
    // message it began waiting for at `since` (once per wait). A message may arrive between the
    // watch's look and this call: StillWaitingSince(since) tells.
    virtual void OnIdle(absl::Duration limit, int64_t since) = 0;
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

  // `limit` 0 (or infinite) turns the watch off: Add and Remove do nothing and no thread runs.
  // The watch looks four times per limit, but not more often than every 10 ms.
  explicit StreamIdleWatch(absl::Duration limit);
  ~StreamIdleWatch();
  StreamIdleWatch(const StreamIdleWatch&) = delete;
  StreamIdleWatch& operator=(const StreamIdleWatch&) = delete;

  void Add(Stream* stream);
  // Once Remove returns the watch takes no new reference to `stream` (one already taken is
  // released after its OnIdle).
  void Remove(Stream* stream);

  absl::Duration limit() const { return limit_; }

 private:
  void Run();

  const absl::Duration limit_;
  absl::Mutex mu_;
  absl::flat_hash_set<Stream*> streams_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace gpureduce::server
