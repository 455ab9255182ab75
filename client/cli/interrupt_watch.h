#pragma once

// Ctrl-C (SIGINT), SIGTERM and SIGHUP (a closed terminal) as requests to stop cleanly, for commands
// that hold something outside the process (a shared-memory object, a region registered with the
// server) that a plain exit on the signal would leave behind. While an InterruptWatch lives, the
// signals are blocked in the thread that made it and in every thread started after it (gRPC's too),
// and a thread of its own waits for them. Until the command says it holds something
// (SetLastResort), a signal ends the process at once, as it would without the watch (a read of
// stdin cannot hang it). Afterwards the first sets interrupted(), which the command checks between
// steps so that its destructors clean up on the way out; a second runs the last-resort cleanup and
// exits at once. Either way the exit code is 128 + the signal.

#include <atomic>
#include <csignal>
#include <functional>
#include <mutex>
#include <thread>

namespace gpureduce::cli {

class InterruptWatch {
 public:
  // Make it before any thread that must not take the signals is started.
  InterruptWatch();
  ~InterruptWatch();  // stops watching and unblocks the signals again
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;

  bool interrupted() const { return signal_.load() != 0; }
  // The exit code for an interrupted command: 128 + the signal (130 for Ctrl-C).
  int exit_code() const { return 128 + signal_.load(); }

  // From now on a first signal only sets interrupted(); a second runs `cleanup` (on the watch's
  // thread, beside the command's own) before the process exits. It must be quick and own (or
  // share) what it uses. Call it before making what needs cleaning up, with a `cleanup` that does
  // nothing if need be, then again with the real one.
  void SetLastResort(std::function<void()> cleanup);

 private:
  void Watch();

  sigset_t signals_;
  sigset_t previous_mask_;
  std::atomic<int> signal_{0};
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::function<void()> last_resort_;  // guarded by mutex_
  bool holding_ = false;               // guarded by mutex_: SetLastResort was called
  std::thread thread_;
};

}  // namespace gpureduce::cli
