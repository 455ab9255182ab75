#pragma once

namespace gpureduce::cli {

int RunKernels(int argc, char** argv);  // gpureduce kernels
int RunInfo(int argc, char** argv);     // gpureduce info
int RunHealth(int argc, char** argv);   // gpureduce health

}  // namespace gpureduce::cli
