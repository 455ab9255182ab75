#pragma once

// The server's warnings about what clients did wrong, at a rate no client can turn into a
// flooded disk: each (client address, kind) gets a burst of lines and then one per period, all
// together a burst and then a few a second, and every line that was left out is counted and
// reported (with the key's next line, or in a summary line at most once a second). Counting in
// the metrics is not affected: every refusal is still counted there.

#include <cstdint>
#include <string>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace gpureduce::server {

class FailureLog {
 public:
  struct Options {
    int burst = 10;                                  // lines a key may write at once
    absl::Duration period = absl::Seconds(10);       // then one line per key this often
    int global_burst = 100;                          // lines all keys together may write at once
    double global_per_second = 10;                   // then this many a second
    size_t max_keys = 4096;                          // keys remembered; beyond, all share one
    absl::Duration report_every = absl::Seconds(1);  // the summary of lines left out
  };

  FailureLog();
  explicit FailureLog(const Options& options);
  ~FailureLog();  // reports what is still unreported
  FailureLog(const FailureLog&) = delete;
  FailureLog& operator=(const FailureLog&) = delete;

  // Writes the warning `line()` makes (called only when it is written) unless the key (the
  // client's address and a kind, e.g. a status code) has used its share. Returns whether it
  // wrote.
  bool Warn(absl::string_view address, absl::string_view kind,
            absl::FunctionRef<std::string()> line);

  // Lines left out so far.
  uint64_t suppressed() const;

 private:
  struct Key {
    std::string address, kind;
    bool operator==(const Key&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.address, k.kind);
    }
  };
  struct Share {
    double tokens = 0;
    absl::Time refilled;
    uint64_t suppressed = 0;  // since this key's last line
  };

  // Writes the summary of lines left out and not reported yet, if any.
  void Report() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<Key, Share> shares_ ABSL_GUARDED_BY(mu_);
  double global_tokens_ ABSL_GUARDED_BY(mu_);
  absl::Time global_refilled_ ABSL_GUARDED_BY(mu_);
  uint64_t suppressed_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t unreported_ ABSL_GUARDED_BY(mu_) = 0;  // left out and in no line yet
  absl::Notification stopping_;
  std::thread reporter_;
};

}  // namespace gpureduce::server
