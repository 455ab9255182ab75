#include "server/failure_log.h"

#include <algorithm>

#include "absl/time/clock.h"
#include "spdlog/spdlog.h"

namespace gpureduce::server {

FailureLog::FailureLog() : FailureLog(Options()) {}

FailureLog::FailureLog(const Options& options)
    : options_(options), global_tokens_(options.global_burst), global_refilled_(absl::Now()) {
  reporter_ = std::thread([this] {
    while (!stopping_.WaitForNotificationWithTimeout(options_.report_every)) {
      absl::MutexLock lock(&mu_);
      Report();
    }
  });
}

FailureLog::~FailureLog() {
  stopping_.Notify();
  reporter_.join();
  absl::MutexLock lock(&mu_);
  Report();
}

bool FailureLog::Warn(absl::string_view address, absl::string_view kind,
                      absl::FunctionRef<std::string()> line) {
  absl::MutexLock lock(&mu_);
  const absl::Time now = absl::Now();
  global_tokens_ = std::min<double>(
      options_.global_burst,
      global_tokens_ + options_.global_per_second * absl::ToDoubleSeconds(now - global_refilled_));
  global_refilled_ = now;
  Key key{std::string(address), std::string(kind)};
  if (shares_.size() >= options_.max_keys && !shares_.contains(key)) {
    key = Key{"(many clients)", std::string(kind)};
  }
  auto [it, inserted] = shares_.try_emplace(key);
  Share& share = it->second;
  if (inserted) {
    share.tokens = options_.burst;
  } else {
    share.tokens = std::min<double>(options_.burst,
                                    share.tokens + absl::ToDoubleSeconds(now - share.refilled) /
                                                       absl::ToDoubleSeconds(options_.period));
  }
  share.refilled = now;
  if (share.tokens < 1 || global_tokens_ < 1) {
    ++share.suppressed;
    ++suppressed_;
    ++unreported_;
    return false;
  }
  share.tokens -= 1;
  global_tokens_ -= 1;
  if (share.suppressed == 0) {
    spdlog::warn("{}", line());
  } else {
    spdlog::warn("{} ({} similar lines from {} left out before this one)", line(), share.suppressed,
                 key.address);
    unreported_ -= std::min(unreported_, share.suppressed);
    share.suppressed = 0;
  }
  // Keys that have their full share again are forgotten, so the map stays small.
  if (shares_.size() > options_.max_keys / 2) {
    absl::erase_if(shares_, [&](const auto& entry) {
      const Share& s = entry.second;
      return s.suppressed == 0 && now - s.refilled > options_.period * options_.burst;
    });
  }
  return true;
}

void FailureLog::Report() {
  if (unreported_ == 0) return;
  spdlog::warn(
      "{} failure lines left out in the last {} (each client address and kind may "
      "write {} at once, then one every {}); the metrics count every failure",
      unreported_, absl::FormatDuration(options_.period), options_.burst,
      absl::FormatDuration(options_.period));
  unreported_ = 0;
  for (auto& [key, share] : shares_) share.suppressed = 0;
}

uint64_t FailureLog::suppressed() const {
  absl::MutexLock lock(&mu_);
  return suppressed_;
}

}  // namespace gpureduce::server
