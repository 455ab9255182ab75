#pragma once

// --shared-memory, declared the same way in every tool that sends by reference (gpureduce reduce,
// gpureduce-load): `--shared-memory=system` (a POSIX shared-memory object), `--shared-memory=cuda`
// (GPU memory by CUDA IPC handle), or a bare `--shared-memory`, which means system.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/flags.h"

namespace gpureduce {

inline constexpr char kSharedMemorySystem[] = "system";
inline constexpr char kSharedMemoryCuda[] = "cuda";

// The kinds, in the order help lists them.
std::vector<std::string> SharedMemoryKinds();

// Registers --shared-memory[={system|cuda}] bound to `kind` ("" when not given).
void AddSharedMemoryFlag(FlagSet& flags, std::string* kind, absl::string_view help);

}  // namespace gpureduce
