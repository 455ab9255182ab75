#include "common/mutex_tuning.h"

#include "absl/synchronization/mutex.h"

namespace gpureduce {

void SkipMutexDeadlockDetection() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

}  // namespace gpureduce
