#include "client/cli/interrupt_watch.h"

#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <utility>

namespace gpureduce::cli {

InterruptWatch::InterruptWatch() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGINT);
  sigaddset(&signals_, SIGTERM);
  sigaddset(&signals_, SIGHUP);  // a closed terminal
  pthread_sigmask(SIG_BLOCK, &signals_, &previous_mask_);
  thread_ = std::thread([this] { Watch(); });
}

InterruptWatch::~InterruptWatch() {
  stopping_ = true;
  pthread_kill(thread_.native_handle(), SIGINT);  // wakes sigwait, which sees stopping_
  thread_.join();
  // A signal that came meanwhile is delivered now, with its usual effect.
  pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
}

void InterruptWatch::SetLastResort(std::function<void()> cleanup) {
  std::lock_guard<std::mutex> lock(mutex_);
  last_resort_ = std::move(cleanup);
  holding_ = true;
}

void InterruptWatch::Watch() {
  while (true) {
    int signal = 0;
    if (sigwait(&signals_, &signal) != 0) continue;
    if (stopping_) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!holding_) _exit(128 + signal);  // nothing to clean up yet
    }
    int expected = 0;
    if (signal_.compare_exchange_strong(expected, signal)) {
      constexpr char kMessage[] =
          "\ngpureduce: interrupted; cleaning up (interrupt again to quit at once)\n";
      (void)!write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (last_resort_) last_resort_();
    }
    _exit(128 + signal_.load());
  }
}

}  // namespace gpureduce::cli
