#pragma once

// Debian builds abseil without NDEBUG, so every absl::Mutex (gRPC's locks are absl::Mutex) keeps
// abseil's lock-order graph for deadlock detection: on each acquisition it looks the mutex up in
// a graph behind one process-wide lock. Measured on the 2-core dev machine with perf, serving
// 1024-float requests at concurrency 64: 4.5% of the server's CPU in GraphCycles alone (the
// sink's the same). Release builds of abseil skip the check; this does the same for Debian's.
// gRPC's own tests cover its lock order; ours take std::mutex.

namespace gpureduce {

// Call once at the start of main, before any threads exist.
void SkipMutexDeadlockDetection();

}  // namespace gpureduce
