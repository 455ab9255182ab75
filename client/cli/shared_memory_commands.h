#pragma once

namespace gpureduce::cli {

// gpureduce shared-memory list | unregister NAME|--all
int RunSharedMemory(int argc, char** argv);

}  // namespace gpureduce::cli
