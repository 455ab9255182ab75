#include "common/shared_memory_flag.h"

namespace gpureduce {

std::vector<std::string> SharedMemoryKinds() { return {kSharedMemorySystem, kSharedMemoryCuda}; }

void AddSharedMemoryFlag(FlagSet& flags, std::string* kind, absl::string_view help) {
  flags.AddOptionalChoice("shared-memory", kind, SharedMemoryKinds(), kSharedMemorySystem, help);
}

}  // namespace gpureduce
