#pragma once

// The flags that choose and size gpureduce-server's compute backend. Their text ("all", "0,2",
// a deprecated name) is read here and flag names are worded here, so the runtime sees only
// typed options (runtime::BackendOptions) and speaks of GPUs, not of flags.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/flags.h"
#include "runtime/backend_factory.h"

namespace gpureduce::server {

class BackendFlags {
 public:
  // Binds --backend, --worker-threads, --devices, --cuda-streams (and its deprecated old name
  // --streams), --staging-buffers, --staging-buffer-bytes, --copy-threads, --auto-cpu-below and
  // --split-above, with runtime::BackendOptions' defaults. This object must outlive `flags`.
  void Register(FlagSet& flags);

  // After flags.Parse: the typed options, or INVALID_ARGUMENT naming the flag and what it takes.
  absl::StatusOr<runtime::BackendOptions> Options() const;

  // What to log once at start when the deprecated --streams was given (on the command line or
  // in the environment); empty when it was not.
  std::string DeprecationWarning() const;

 private:
  runtime::BackendOptions options_;          // the integer flags are bound to it directly
  std::string kind_;                         // --backend, from options_ until parsed
  std::string devices_;                      // --devices, the same
  std::string streams_;                      // the deprecated --streams; empty: not given
  std::string host_region_split_ = "auto";   // --host-region-split
  std::string auto_cpu_below_ = "measured";  // --auto-cpu-below
  absl::Duration batch_window_ = absl::Microseconds(100);  // --batch-window
};

// "all", or GPU indices such as "0,2", each at most once.
absl::StatusOr<std::vector<int>> ParseDeviceList(absl::string_view text);

// runtime::CreateBackend, with its errors prefixed by the flags that asked for what failed
// ("--backend=cuda --devices=5: GPU 5 does not exist; ...").
absl::StatusOr<std::unique_ptr<runtime::Backend>> CreateBackendFromFlags(
    const runtime::BackendOptions& options);

}  // namespace gpureduce::server
